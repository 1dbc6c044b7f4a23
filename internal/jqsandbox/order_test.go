package jqsandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itchyny/gojq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jqText returns jq 1.6's output lines, byte for byte.
func jqText(t *testing.T, file string, mode Mode, filter string) []string {
	t.Helper()
	args := []string{"-c"}
	if mode == Slurp {
		args = append(args, "-s")
	}
	out, err := exec.Command(jqPath, append(args, filter, file)...).Output()
	require.NoError(t, err, "jq %s", filter)
	if s := strings.TrimSuffix(string(out), "\n"); s != "" {
		return strings.Split(s, "\n")
	}
	return []string{}
}

// TestKeyOrderMatchesJQ compares results with jq 1.6's byte for byte, so
// that object keys come out in jq's order: the records' for objects passed
// through, the query's for objects it builds. Every path is checked: a
// reader, decoded records, a guarded and a trusted query.
func TestKeyOrderMatchesJQ(t *testing.T) {
	if _, err := os.Stat(jqPath); err != nil {
		t.Skip("jq not installed")
	}
	file := filepath.Join(t.TempDir(), "records.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(sampleJSONL), 0o600))
	recs, err := DecodeRecords(strings.NewReader(sampleJSONL), testLimits())
	require.NoError(t, err)

	tests := []struct {
		filter  string
		mode    Mode
		trusted bool // a recipe-like filter, also run by CompileTrusted
	}{
		{`.`, Stream, true},
		{`select(.namespace | startswith("_semantic"))`, Stream, true},
		{`{id, title, namespace}`, Stream, true},
		{`{title, id}`, Stream, true},
		{`.[0]`, Slurp, true},
		{`sort_by(.created)`, Slurp, true},
		{`group_by(.namespace) | map({namespace: .[0].namespace, count: length})`, Slurp, true},
		{`.[:2]`, Slurp, true},
		{`.provenance`, Stream, true},
		{`{id, provenance}`, Stream, true},
		{`del(.tags)`, Stream, false},
		{`. + {score: 1}`, Stream, false},
		{`.provenance.extra = 1`, Stream, false},
		{`{id} + {n: (.tags // [] | length)} | . * {n: {deep: true}}`, Stream, false},
		{`with_entries(select(.key != "provenance"))`, Stream, false},
		{`to_entries | map(.key)`, Stream, false},
		{`keys_unsorted`, Stream, false},
		{`map({"the title": .title, id}) | .[0]`, Slurp, false},
		{`.id as $v | {$v, a: 1}`, Stream, false},
		{`{title: "<b>a & b</b>"}`, Stream, false},
	}
	lim := testLimits()
	for _, tt := range tests {
		t.Run(tt.mode.String()+" "+tt.filter, func(t *testing.T) {
			want := jqText(t, file, tt.mode, tt.filter)
			q, err := Compile(tt.filter, nil, lim)
			require.NoError(t, err)
			res, err := q.Run(context.Background(), strings.NewReader(sampleJSONL), tt.mode, nil, lim)
			require.NoError(t, err)
			assert.Equal(t, want, strs(res.Values), "Run")
			res, err = q.RunRecords(context.Background(), recs, tt.mode, nil, lim)
			require.NoError(t, err)
			assert.Equal(t, want, strs(res.Values), "RunRecords")
			if tt.trusted {
				q, err := CompileTrusted(tt.filter, nil)
				require.NoError(t, err)
				res, err := q.RunRecords(context.Background(), recs, tt.mode, nil, lim)
				require.NoError(t, err)
				assert.Equal(t, want, strs(res.Values), "trusted")
			}
		})
	}
}

// TestKeyOrderFallbacks pins the order of objects that neither the input
// nor the query has exactly (see keyOrder), where jq's order depends on
// how the object was built.
func TestKeyOrderFallbacks(t *testing.T) {
	input := `{"b":1,"a":2,"c":{"z":1,"y":2}}` + "\n"
	for _, tc := range []struct{ query, want string }{
		{`.`, `{"b":1,"a":2,"c":{"z":1,"y":2}}`},
		{`del(.a)`, `{"b":1,"c":{"z":1,"y":2}}`},                            // a subset: the input's order
		{`. + {x: 1, d: 2}`, `{"b":1,"a":2,"c":{"z":1,"y":2},"x":1,"d":2}`}, // new keys after, in the query's order
		{`.c + {new: 1}`, `{"z":1,"y":2,"new":1}`},
		{`{q: 1} + {p: 2}`, `{"q":1,"p":2}`},
		{`{(.c | keys[0]): 1, m: 2}`, `{"m":2,"y":1}`}, // computed keys are not known: by name
		{`[{"k": 1, "j": 2}, .c] | map(keys_unsorted)`, `[["k","j"],["z","y"]]`},
	} {
		res, err := run(t, tc.query, input, Stream, testLimits(), nil)
		require.NoError(t, err, tc.query)
		assert.Equal(t, []string{tc.want}, strs(res.Values), tc.query)
	}
	// Without any known order, keys come out sorted, as gojq prints them.
	recs, err := DecodeRecords(strings.NewReader(input), testLimits())
	require.NoError(t, err)
	q, err := Compile(`.`, nil, testLimits())
	require.NoError(t, err)
	res, err := q.run(context.Background(), &sliceSource{records: recs.values}, Stream, nil, testLimits().withDefaults())
	require.NoError(t, err)
	assert.Equal(t, []string{`{"a":2,"b":1,"c":{"y":2,"z":1}}`}, strs(res.Values))
}

// TestResultsAreNotHTMLEscaped: the model reads results, not a browser.
func TestResultsAreNotHTMLEscaped(t *testing.T) {
	res, err := run(t, `{t: .title}, .title, error({why: "a<b>&c"})`, `{"title":"<b>x & y</b>"}`, Stream, testLimits(), nil)
	require.Error(t, err)
	assert.Equal(t, []string{`{"t":"<b>x & y</b>"}`, `"<b>x & y</b>"`}, strs(res.Values))
	var qe *QueryError
	require.ErrorAs(t, err, &qe)
	assert.Contains(t, string(qe.Value), `a<b>&c`)

	long := strings.Repeat("<&>", 30000) // too long to show whole: a preview
	_, err = run(t, `error({big: .})`, `"`+long+`"`, Stream, testLimits(), nil)
	require.ErrorAs(t, err, &qe)
	assert.Contains(t, string(qe.Value), "<&>")
	assert.NotContains(t, string(qe.Value), `\u003c`)
}

func TestQueryObjects(t *testing.T) {
	q, err := gojq.Parse(`def f: {x, y}; .v as $v | {a, "b c": 1, (.k): 2, "\(.d)": 3, $v, a: 4} | f | [{z: {w: 1}}] | .[{q: 1, r: 2}.q]`)
	require.NoError(t, err)
	assert.ElementsMatch(t, [][]string{{"x", "y"}, {"a", "b c", "v"}, {"z"}, {"w"}, {"q", "r"}}, queryObjects(q),
		"static keys in order, once each; computed keys left out")
}
