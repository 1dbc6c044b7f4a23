package jqsandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCountIsExactEveryTime: a run whose output is full goes on counting
// the results it leaves out to the end of the records, read from a file
// or cached, so that the total is the same every run and equals the
// number of results the query has (issue 32.1: a count that depended on
// the time spent said 6,755 to 9,783 of 18,359).
func TestCountIsExactEveryTime(t *testing.T) {
	input := benchJSONL(20000)
	const query = `select(.title|test("a";"i"))`
	lim := testLimits()
	lim.Timeout = time.Minute
	all, err := run(t, query+`|1`, input, Stream, Limits{Timeout: time.Minute, MaxOutputs: 1 << 20}, nil)
	require.NoError(t, err)
	require.False(t, all.Truncated)
	want := len(all.Values)
	require.Greater(t, want, 1000)

	lim.MaxOutputs = 24
	q, err := Compile(query, nil, lim)
	require.NoError(t, err)
	recs, err := DecodeRecords(strings.NewReader(input), lim)
	require.NoError(t, err)
	for i := range 6 {
		res, err := q.Run(context.Background(), strings.NewReader(input), Stream, nil, lim)
		require.NoError(t, err)
		require.True(t, res.Truncated)
		require.False(t, res.Uncounted)
		require.Equal(t, want, len(res.Values)+res.Omitted, "run %d from the file", i)

		res, err = q.RunRecords(context.Background(), recs, Stream, nil, lim)
		require.NoError(t, err)
		require.False(t, res.Uncounted)
		require.Equal(t, want, len(res.Values)+res.Omitted, "run %d of the records", i)
	}
}

// TestCountCutByTheDeadlineIsNotStated: a count the deadline ends is
// marked Uncounted (what it reached depends on time), and the run still
// returns the results it shows, without an error.
func TestCountCutByTheDeadlineIsNotStated(t *testing.T) {
	lim := testLimits()
	lim.MaxOutputs = 3
	lim.Timeout = 100 * time.Millisecond
	res, err := run(t, `range(1e12)`, `null`, Stream, lim, nil)
	require.NoError(t, err)
	require.Len(t, res.Values, 3)
	require.True(t, res.Truncated)
	require.True(t, res.Uncounted)
}

// TestKnownCountStopsWhenFull: given the count an earlier run learned, a
// run stops once its output is full (a record after it that would fail
// is never evaluated) and states that count; a count below what it shows
// cannot be the query's, and is not stated.
func TestKnownCountStopsWhenFull(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(benchJSONL(1000), "\n"), "\n")
	lines[900] = `{"title":1}` // test fails on a number
	input := strings.Join(lines, "\n") + "\n"
	lim := testLimits()
	lim.MaxOutputs = 5
	const query = `select(.title|test("a";"i"))`
	res, err := run(t, query, input, Stream, lim, nil)
	require.NoError(t, err)
	require.True(t, res.Uncounted, "counted to the end, the run meets the record")

	lim.KnownResults = 700
	res, err = run(t, query, input, Stream, lim, nil)
	require.NoError(t, err)
	require.True(t, res.Truncated)
	require.False(t, res.Uncounted)
	require.Len(t, res.Values, 5)
	require.Equal(t, 695, res.Omitted)

	lim.KnownResults = 3
	res, err = run(t, query, input, Stream, lim, nil)
	require.NoError(t, err)
	require.True(t, res.Uncounted)
}
