package jqsandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/itchyny/gojq"
	"github.com/stretchr/testify/require"
)

// TestOnceOf: the queries proved to yield one result per record, and
// what they need of it; any query that may yield none or two, or fail on
// an object, is left to be evaluated.
func TestOnceOf(t *testing.T) {
	once := map[string]string{
		`.title`:                       "",
		`.["title"]`:                   "",
		`.`:                            "",
		`{id, title, namespace}`:       "",
		`{id: .id, "t": .title, n: 1}`: "",
		`[.title, .namespace]`:         "",
		`[.title, .namespace] | @tsv`:  "namespace,title",
		`[.a, .a, "x", null] | @csv`:   "a",
		`[] | @tsv`:                    "",
		`{}`:                           "",
	}
	for q, scalars := range once {
		ast, err := gojq.Parse(q)
		require.NoError(t, err)
		c := onceOf(ast)
		require.NotNil(t, c, q)
		require.Equal(t, scalars, strings.Join(c.scalars, ","), q)
	}
	for _, q := range []string{
		`select(.a)`, `empty`, `.a, .b`, `.tags[]`, `.a.b`, `.a[0]`, `.[0]`, `.a?`,
		`error`, `.a | tostring`, `{(.k): 1}`, `{$__loc__}`, `{"\(.a)": 1}`, `[.a[]]`,
		`[.a] | @sh`, `[.a] | @html`, `.a | @tsv`, `[.tags] | @json`, `if .a then 1 else 2 end`,
		`def f: .; f`, `.a // .b`, `1 + .a`, `"\(.a)"`, `[.a] | @tsv | ascii`, `.[1:]`, `(.a)`,
	} {
		ast, err := gojq.Parse(q)
		require.NoError(t, err)
		require.Nil(t, onceOf(ast), q)
	}
}

// TestOnceCountsWithoutDecoding: a list's count, once its output is
// full, comes from the lines (skimmed), and equals what running the
// query on every record gives; the records the check cannot vouch for
// are evaluated, so that one that fails still stops the count, and one
// that yields its result through a repeated or escaped key still counts.
func TestOnceCountsWithoutDecoding(t *testing.T) {
	lim := testLimits()
	lim.Timeout = time.Minute
	input := benchJSONL(5000)
	for _, query := range []string{`[.title,.namespace]|@tsv`, `{id,title}`, `.title`} {
		q, err := Compile(query, nil, lim)
		require.NoError(t, err)
		small := lim
		small.MaxOutputs = 10
		for i := range 3 {
			res, err := q.Run(context.Background(), strings.NewReader(input), Stream, nil, small)
			require.NoError(t, err)
			require.False(t, res.Uncounted, query)
			require.Equal(t, 5000, len(res.Values)+res.Omitted, "%s, run %d", query, i)
			require.Greater(t, res.skimmed, 4000, query)
		}
		// Cached: decoded whole, and kept as columns by a first query.
		whole, err := DecodeRecords(strings.NewReader(input), lim)
		require.NoError(t, err)
		_, cols, err := q.RunKeeping(context.Background(), strings.NewReader(input), Stream, nil, lim, 1<<30, nil)
		require.NoError(t, err)
		require.NotNil(t, cols.cols, query)
		for _, recs := range []*Records{whole, cols} {
			res, err := q.RunRecords(context.Background(), recs, Stream, nil, small)
			require.NoError(t, err)
			require.False(t, res.Uncounted, query)
			require.Equal(t, 5000, len(res.Values)+res.Omitted, query)
			require.Greater(t, res.skimmed, 4000, query)
		}
	}

	// A record whose title is an array: @tsv fails on it, as jq does.
	lines := strings.Split(strings.TrimSuffix(input, "\n"), "\n")
	lines[4000] = `{"id":"x","title":["an array"],"namespace":"n"}`
	bad := strings.Join(lines, "\n") + "\n"
	q, err := Compile(`[.title,.namespace]|@tsv`, nil, lim)
	require.NoError(t, err)
	small := lim
	small.MaxOutputs = 10
	res, err := q.Run(context.Background(), strings.NewReader(bad), Stream, nil, small)
	require.NoError(t, err)
	require.True(t, res.Uncounted, "the record that fails is evaluated, and ends the count")

	// A repeated key (the decoder keeps the last), an escaped one and a
	// record that is not an object: evaluated, each one result or an error.
	for _, tc := range []struct {
		line      string
		uncounted bool
	}{
		{`{"title":"a","namespace":"n","title":["x"]}`, true},
		{`{"ti\u0074le":["x"],"namespace":"n"}`, true},
		{`{"ti\u0074le":"x","namespace":"n"}`, false},
		{`"a string"`, true},
		{`{"title":"a","namespace":"n"} {"title":"b","namespace":"n"}`, false},
	} {
		lines := strings.Split(strings.TrimSuffix(input, "\n"), "\n")
		lines[4000] = tc.line
		text := strings.Join(lines, "\n") + "\n"
		res, err := q.Run(context.Background(), strings.NewReader(text), Stream, nil, small)
		require.NoError(t, err, tc.line)
		recs, err := DecodeRecords(strings.NewReader(text), lim)
		require.NoError(t, err)
		cached, err := q.RunRecords(context.Background(), recs, Stream, nil, small)
		require.NoError(t, err, tc.line)
		for _, res := range []Result{res, cached} {
			require.Equal(t, tc.uncounted, res.Uncounted, tc.line)
			if !tc.uncounted {
				want := 5000
				if strings.Count(tc.line, "{") == 2 {
					want++ // two records on a line, as jq reads them
				}
				require.Equal(t, want, len(res.Values)+res.Omitted, tc.line)
			}
		}
	}

	// A query that may yield no result or two is evaluated to the end.
	for _, query := range []string{`select(.title|test("a"))`, `.title, .id`} {
		all, err := run(t, query, input, Stream, Limits{Timeout: time.Minute, MaxOutputs: 1 << 20}, nil)
		require.NoError(t, err)
		res, err := run(t, query, input, Stream, small, nil)
		require.NoError(t, err)
		require.Equal(t, len(all.Values), len(res.Values)+res.Omitted, query)
		require.Zero(t, res.skimmed, query)
	}
}
