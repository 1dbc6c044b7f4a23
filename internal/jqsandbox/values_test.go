package jqsandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunRecordsMatchesRun checks the decoded path (DecodeRecords +
// RunRecords, with
// guarded and trusted queries) against Run over the same JSONL.
func TestRunRecordsMatchesRun(t *testing.T) {
	input := `{"type":"lro_header","count":8}` + "\n" + sampleJSONL
	records, err := DecodeRecords(strings.NewReader(input), testLimits())
	require.NoError(t, err)
	require.Equal(t, 8, records.Len(), "the header is skipped, blank lines too")

	for _, tc := range []struct {
		query string
		mode  Mode
		names []string
		vars  []any
	}{
		{`select(.title | test($k; "i")) | .id`, Stream, []string{"k"}, []any{"cach"}},
		{`{id, n: (.tags // [] | length)}`, Stream, nil, nil},
		{`select(.size > 1000)`, Stream, nil, nil},
		{`group_by(.namespace) | map({namespace: .[0].namespace, count: length})`, Slurp, nil, nil},
		{`sort_by(.provenance.confidence) | reverse | map(.id)`, Slurp, nil, nil},
		{`def twice: . * 2; .size | twice`, Stream, nil, nil},
		{`select((.tags // []) | index($t)) | .id`, Stream, []string{"t"}, []any{"security"}},
	} {
		want, err := run(t, tc.query, sampleJSONL, tc.mode, testLimits(), tc.names, tc.vars...)
		require.NoError(t, err, tc.query)
		q, err := Compile(tc.query, tc.names, testLimits())
		require.NoError(t, err)
		got, err := q.RunRecords(context.Background(), records, tc.mode, tc.vars, testLimits())
		require.NoError(t, err, tc.query)
		assert.Equal(t, strs(want.Values), strs(got.Values), "guarded, decoded: %s", tc.query)

		tq, err := CompileTrusted(tc.query, tc.names)
		require.NoError(t, err)
		got, err = tq.RunRecords(context.Background(), records, tc.mode, tc.vars, testLimits())
		require.NoError(t, err, tc.query)
		assert.Equal(t, strs(want.Values), strs(got.Values), "trusted, decoded: %s", tc.query)
	}
}

// TestRunRecordsLeavesRecordsAlone: cached records are shared by later
// queries, so no query may change them.
func TestRunRecordsLeavesRecordsAlone(t *testing.T) {
	records, err := DecodeRecords(strings.NewReader(sampleJSONL), testLimits())
	require.NoError(t, err)
	for _, query := range []string{`.title = "changed"`, `del(.tags)`, `.provenance.confidence |= . * 0`, `.tags |= ((. // []) | sort)`, `to_entries | from_entries`} {
		q, err := Compile(query, nil, testLimits())
		require.NoError(t, err)
		_, err = q.RunRecords(context.Background(), records, Stream, nil, testLimits())
		require.NoError(t, err, query)
	}
	q, err := CompileTrusted(`.title`, nil)
	require.NoError(t, err)
	res, err := q.RunRecords(context.Background(), records, Stream, nil, testLimits())
	require.NoError(t, err)
	assert.Equal(t, `"Cache invalidation strategy"`, string(res.Values[0]))
	assert.Equal(t, []any{"performance", "caching"}, records.values[0].(map[string]any)["tags"])
}

func TestTrustedQueriesKeepRunBounds(t *testing.T) {
	records, err := DecodeRecords(strings.NewReader(sampleJSONL), testLimits())
	require.NoError(t, err)
	q, err := CompileTrusted(`last(range(1e12))`, nil)
	require.NoError(t, err)
	short := testLimits()
	// It runs to its deadline; the next, to the heap watchdog's budget.
	short.Timeout, short.MaxHeapBytes = 300*time.Millisecond, runawayHeap
	_, err = q.RunRecords(context.Background(), records, Stream, nil, short)
	assert.ErrorIs(t, err, ErrTimeout)
	q, err = CompileTrusted(`[range(1e9)]`, nil)
	require.NoError(t, err)
	_, err = q.RunRecords(context.Background(), records, Slurp, nil, short)
	assert.True(t, err != nil, "a runaway trusted query still ends")
	_, err = CompileTrusted(`select(`, nil)
	var qe *QueryError
	assert.ErrorAs(t, err, &qe)
}
