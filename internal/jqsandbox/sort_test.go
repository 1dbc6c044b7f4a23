package jqsandbox

import (
	"context"
	"encoding/json"

	"strings"
	"testing"

	"github.com/itchyny/gojq"
	"github.com/stretchr/testify/require"
)

// TestSortMatchesGojq: the sandbox's sort_by and group_by (sort.go) give
// gojq's own results, stable among equal keys, for keys of every type,
// and gojq's errors for what is not an array, whether the query is
// compiled with guards or trusted.
func TestSortMatchesGojq(t *testing.T) {
	records := []string{
		`{"k":"b","i":0}`, `{"k":"a","i":1}`, `{"k":"b","i":2}`, `{"k":1,"i":3}`, `{"k":null,"i":4}`,
		`{"k":[1,"x"],"i":5}`, `{"k":{"z":1},"i":6}`, `{"i":7}`, `{"k":"a","i":8}`, `{"k":0.5,"i":9}`,
		`{"k":true,"i":10}`, `{"k":false,"i":11}`, `{"k":[1],"i":12}`, `{"k":"b","i":13}`,
	}
	input := strings.Join(records, "\n") + "\n"
	strings4 := `{"k":"b","i":0}` + "\n" + `{"k":"a","i":1}` + "\n" + `{"k":"b","i":2}` + "\n" + `{"k":"a","i":3}` + "\n"
	slurped := []string{
		`sort_by(.k)`, `sort_by(.k)|map(.i)`, `sort_by(-.i)|map(.i)`, `group_by(.k)|map(map(.i))`,
		`group_by(.k|type)|map(length)`, `sort_by(.k)|reverse|.[:3]`, `[]|sort_by(.k)`, `[]|group_by(.k)`,
		`{"a":{"k":2},"b":{"k":1}}|sort_by(.k)`, `"x"|sort_by(.)`, `"x"|group_by(.)`, `{"a":1}|group_by(.)`,
	}
	for _, in := range []string{input, strings4} {
		var all []any
		dec := json.NewDecoder(strings.NewReader(in))
		for dec.More() {
			var v any
			require.NoError(t, dec.Decode(&v))
			all = append(all, v)
		}
		for _, query := range slurped {
			want := gojqRun(t, query, all)
			for _, trusted := range []bool{false, true} {
				var q *Query
				var err error
				if trusted {
					q, err = CompileTrusted(query, nil)
				} else {
					q, err = Compile(query, nil, testLimits())
				}
				require.NoError(t, err, query)
				res, err := q.Run(context.Background(), strings.NewReader(in), Slurp, nil, testLimits())
				var shown []string // in gojq's key order, as gojqRun shows them
				for _, v := range res.Values {
					var x any
					require.NoError(t, json.Unmarshal(v, &x))
					b, err := gojq.Marshal(x)
					require.NoError(t, err)
					shown = append(shown, string(b))
				}
				got := strings.Join(shown, "\n")
				if err != nil {
					got += "error: " + strings.TrimPrefix(err.Error(), "jqsandbox: ")
				}
				require.Equal(t, want, got, "%s trusted=%v", query, trusted)
			}
		}
	}
}

// gojqRun runs query over v with gojq alone, as the sandbox shows
// results: compact, one a line, then the error.
func gojqRun(t *testing.T, query string, v any) string {
	t.Helper()
	q, err := gojq.Parse(query)
	require.NoError(t, err)
	code, err := gojq.Compile(q)
	require.NoError(t, err)
	var out []string
	iter := code.Run(v)
	for {
		x, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := x.(error); ok {
			return strings.Join(out, "\n") + "error: " + err.Error()
		}
		b, err := gojq.Marshal(x)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}
