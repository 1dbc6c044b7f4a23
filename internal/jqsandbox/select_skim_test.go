package jqsandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/itchyny/gojq"
	"github.com/stretchr/testify/require"
)

func TestSelectTestOf(t *testing.T) {
	for q, want := range map[string]selectTest{
		`select(.namespace|startswith($namespace))`: {key: "namespace", variable: "namespace"},
		`select(.memory_type==$type)`:               {key: "memory_type", op: gojq.OpEq, variable: "type"},
		`select("x" != .a)`:                         {key: "a", op: gojq.OpNe, lit: "x"},
		`select(.["a b"] | startswith("p"))`:        {key: "a b", lit: "p"},
	} {
		ast, err := gojq.Parse(q)
		require.NoError(t, err)
		got := selectTestOf(ast)
		require.NotNil(t, got, q)
		require.Equal(t, want, *got, q)
	}
	for _, q := range []string{
		`select(.a.b == "x")`, `select(.a == .b)`, `select(.a | startswith("x") | not)`, `select(.a < "x")`,
		`select(.a | endswith("x"))`, `select(.a == "\(.b)")`, `select(.a == $x) | .id`, `select(.a == 1)`,
		`select(.a | startswith($x; 1))`, `select(. as $r | .a == "x")`, `.a == "x"`,
	} {
		ast, err := gojq.Parse(q)
		require.NoError(t, err)
		require.Nil(t, selectTestOf(ast), q)
	}
}

// TestSelectCountsFromTheField: a select of a string field counts what its
// full output leaves out from the field's text, exactly what running it on
// every record gives, from a file and from cached records; a record whose
// field it cannot read as it stands (escapes, a key given twice or
// escaped, not an object) is evaluated, and one on which the condition
// fails still ends the count.
func TestSelectCountsFromTheField(t *testing.T) {
	lim := testLimits()
	lim.Timeout = time.Minute
	small := lim
	small.MaxOutputs = 5
	lines := strings.Split(strings.TrimSuffix(benchJSONL(4000), "\n"), "\n")
	edits := map[int]string{
		3000: `{"namespace":"_sem\u0061ntic/x","title":"escaped value"}`,
		3001: `{"namespace":"_episodic","title":"twice","namespace":"_semantic/y"}`,
		3002: `{"n\u0061mespace":"_semantic/z"}`,
		3004: `{"namespace":17}`,
		3005: `{"title":"no namespace"}`,
		3006: `{"namespace":"_semantic/a"} {"namespace":"_semantic/b"}`,
	}
	for i, l := range edits {
		lines[i] = l
	}
	input := strings.Join(lines, "\n") + "\n"
	// Columns a query of the same field kept.
	keeper, err := Compile(`select(.namespace == "none")`, nil, lim)
	require.NoError(t, err)
	_, cols, err := keeper.RunKeeping(context.Background(), strings.NewReader(input), Stream, nil, lim, 1<<30, nil)
	require.NoError(t, err)
	require.NotNil(t, cols.cols)
	for _, tc := range []struct {
		query, value string
		fails        bool // on a record, once counting
	}{
		{`select(.namespace == $v)`, "_semantic/security", false},
		{`select(.namespace != $v)`, "_semantic/security", false},
		{`select(.namespace | startswith($v))`, "_semantic", true}, // 17, absent
		{`select(.namespace | startswith("_semantic"))`, "", true},
	} {
		q, err := Compile(tc.query, []string{"v"}, lim)
		require.NoError(t, err)
		whole, err := q.Run(context.Background(), strings.NewReader(input), Stream, []any{tc.value}, Limits{Timeout: time.Minute, MaxOutputs: 1 << 20})
		recs, err2 := DecodeRecords(strings.NewReader(input), lim)
		require.NoError(t, err2)

		read, err4 := q.Run(context.Background(), strings.NewReader(input), Stream, []any{tc.value}, small)
		require.NoError(t, err4)
		decoded, err5 := q.RunRecords(context.Background(), recs, Stream, []any{tc.value}, small)
		require.NoError(t, err5)
		kept, err6 := q.RunRecords(context.Background(), cols, Stream, []any{tc.value}, small)
		require.NoError(t, err6)
		for name, res := range map[string]Result{"read": read, "decoded": decoded, "columns": kept} {
			if tc.fails {
				require.Error(t, err, tc.query)
				require.True(t, res.Uncounted, "%s %s", tc.query, name)
				continue
			}
			require.NoError(t, err, tc.query)
			require.False(t, res.Uncounted, "%s %s", tc.query, name)
			require.Equal(t, len(whole.Values), len(res.Values)+res.Omitted, "%s %s", tc.query, name)
			require.Greater(t, res.skimmed, 100, "%s %s", tc.query, name)
		}
	}

	// Without the failing records, startswith counts exactly too.
	for _, i := range []int{3004, 3005} {
		lines[i] = `{"namespace":"_procedural"}`
	}
	input = strings.Join(lines, "\n") + "\n"
	q, err := Compile(`select(.namespace | startswith($v))`, []string{"v"}, lim)
	require.NoError(t, err)
	whole, err := q.Run(context.Background(), strings.NewReader(input), Stream, []any{"_semantic"}, Limits{Timeout: time.Minute, MaxOutputs: 1 << 20})
	require.NoError(t, err)
	res, err := q.Run(context.Background(), strings.NewReader(input), Stream, []any{"_semantic"}, small)
	require.NoError(t, err)
	require.False(t, res.Uncounted)
	require.Equal(t, len(whole.Values), len(res.Values)+res.Omitted)
	require.Greater(t, res.skimmed, 1000)

	// A value that is not a string is left to the query.
	res, err = q.Run(context.Background(), strings.NewReader(input), Stream, []any{17.0}, small)
	require.Error(t, err)
	require.Zero(t, res.skimmed)
}
