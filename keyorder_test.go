package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/jqsandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jqQuery is a filter as lro_extract runs it and as jq runs it from a shell.
type jqQuery struct {
	filter     string
	slurp, raw bool
}

// extractLines runs q over the file the way lro_extract does (decoded once,
// a trusted recipe, results rendered as formatResults renders them) and
// the way a custom query runs (guarded, read from the file).
func extractLines(t *testing.T, path string, q jqQuery) (decoded, streamed []string) {
	t.Helper()
	mode := jqsandbox.Stream
	if q.slurp {
		mode = jqsandbox.Slurp
	}
	lim := jqsandbox.Limits{}
	render := func(res jqsandbox.Result) []string {
		out := []string{}
		for _, v := range res.Values {
			var s string
			if q.raw && json.Unmarshal(v, &s) == nil {
				out = append(out, strings.Split(s, "\n")...)
				continue
			}
			out = append(out, string(v))
		}
		return out
	}
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := jqsandbox.DecodeRecords(f, lim)
	require.NoError(t, err)
	trusted, err := jqsandbox.CompileTrusted(q.filter, nil)
	require.NoError(t, err)
	res, err := trusted.RunRecords(context.Background(), recs, mode, nil, lim)
	require.NoError(t, err)
	decoded = render(res)

	_, err = f.Seek(0, 0)
	require.NoError(t, err)
	guarded, err := jqsandbox.Compile(q.filter, nil, lim)
	require.NoError(t, err)
	res, err = guarded.Run(context.Background(), f, mode, nil, lim)
	require.NoError(t, err)
	return decoded, render(res)
}

// jqOutput runs q with the jq binary over the records of the file.
func jqOutput(t *testing.T, path string, q jqQuery) []string {
	t.Helper()
	if lines := jqLines(t, path, lro.Recipe{Filter: q.filter, Raw: q.raw, Slurp: q.slurp}, nil); lines != nil {
		return lines
	}
	return []string{}
}

// shellQuery reads the jq filter and flags of a descriptor's command
// ("tail -n +2 FILE | jq [-r] [-s] 'FILTER'").
func shellQuery(t *testing.T, command string) jqQuery {
	t.Helper()
	_, rest, ok := strings.Cut(command, " | jq ")
	require.True(t, ok, command)
	rest, ok = strings.CutSuffix(rest, "|head -c32768")
	require.True(t, ok, "every recipe is cut: %s", command)
	var q jqQuery
	for {
		switch {
		case strings.HasPrefix(rest, "-r "):
			q.raw, rest = true, rest[3:]
			continue
		case strings.HasPrefix(rest, "-s "):
			q.slurp, rest = true, rest[3:]
			continue
		}
		break
	}
	if strings.HasPrefix(rest, "'") {
		rest = strings.ReplaceAll(strings.TrimSuffix(rest[1:], "'"), `'\''`, "'")
	}
	q.filter = rest
	return q
}

// TestExtractKeyOrderMatchesJQ: lro_extract prints every recipe's results
// and common queries' exactly as jq 1.6 does, keys in the records' order
// (not sorted, as gojq prints them) or in the order the query builds them.
func TestExtractKeyOrderMatchesJQ(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("needs the jq binary")
	}
	custom := []jqQuery{
		{filter: `.`},
		{filter: `select(.namespace | startswith("_semantic"))`},
		{filter: `{id, title}`},
		{filter: `.[0]`, slurp: true},
		{filter: `del(.tags)`},
	}
	for _, d := range []lro.Detail{lro.DetailLight, lro.DetailMedium, lro.DetailFull} {
		t.Run(string(d), func(t *testing.T) {
			o := newOffloader(t, nil)
			out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: d, Records: memories(t, 40, d)})
			require.NoError(t, err)
			path := out.Response.FilePath
			queries := custom
			for _, r := range o.Recipes(d) {
				queries = append(queries, jqQuery{filter: r.ShellFilter(), slurp: r.Slurp, raw: r.Raw})
			}
			for _, q := range queries {
				want := jqOutput(t, path, q)
				decoded, streamed := extractLines(t, path, q)
				assert.Equal(t, want, decoded, "%s (decoded records)", q.filter)
				assert.Equal(t, want, streamed, "%s (read from the file)", q.filter)
			}
		})
	}

	t.Run("generic", func(t *testing.T) {
		o := newOffloader(t, nil)
		var recs []json.RawMessage
		for i := range 300 {
			recs = append(recs, json.RawMessage(fmt.Sprintf(
				`{"time":"2026-01-01T00:%02d:%02dZ","level":%q,"service":"checkout","message":"GET /orders/%d took > %dms","latency_ms":%d,"http":{"status":%d,"method":"GET"}}`,
				i/60, i%60, []string{"INFO", "WARN", "ERROR"}[i%3], i, i%250, i%250, 200+i%3)))
		}
		out, err := o.Offload(ctx, lro.ResultSet{Operation: "get_logs", Generic: true, Records: recs})
		require.NoError(t, err)
		require.Equal(t, lro.Offloaded, out.Action)
		path := out.Response.FilePath
		queries := []jqQuery{custom[0], {filter: `{message, level}`}, {filter: `.http`}}
		for _, r := range out.Response.JQRecipes {
			queries = append(queries, shellQuery(t, r.Command))
		}
		for _, q := range queries {
			want := jqOutput(t, path, q)
			decoded, streamed := extractLines(t, path, q)
			assert.Equal(t, want, decoded, "%s (decoded records)", q.filter)
			assert.Equal(t, want, streamed, "%s (read from the file)", q.filter)
		}
	})
}
