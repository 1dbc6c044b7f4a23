package lro

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/jqsandbox"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/mcplro/lro/internal/recipes"
	"github.com/stretchr/testify/require"
)

// TestExtractProjectionDifferential runs every recipe of memory files (each
// detail level) and of generic files, and a table of custom queries, three
// ways: streamed with the query's projection (a cold call), over records
// decoded with that projection (a cached one), and over records decoded
// whole. All three must print the same.
func TestExtractProjectionDifferential(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.OutputDir = t.TempDir()
	o, err := New(cfg)
	require.NoError(t, err)
	defer o.Close()
	lim := jqsandbox.Limits{Timeout: 10 * time.Second}

	type file struct {
		name    string
		records []byte
		recipes []Recipe
	}
	var files []file
	for _, d := range []Detail{DetailLight, DetailMedium, DetailFull} {
		var b bytes.Buffer
		for _, m := range memstore.Generate(300, 7) {
			v, err := memstore.Project(&m, string(d))
			require.NoError(t, err)
			line, err := json.Marshal(v)
			require.NoError(t, err)
			b.Write(line)
			b.WriteByte('\n')
		}
		files = append(files, file{"memories-" + string(d), b.Bytes(), o.Recipes(d)})
	}
	var g bytes.Buffer
	var generic []json.RawMessage
	for i := range 300 {
		line := fmt.Sprintf(`{"id":%d,"name":"item %d","status":%q,"tags":["t%d"],"meta":{"score":%d,"owner":{"b":1,"a":%d}},"note":null}`, i, i, []string{"ok", "failed", "slow"}[i%3], i%5, i%17, i)
		g.WriteString(line + "\n")
		generic = append(generic, json.RawMessage(line))
	}
	files = append(files, file{"generic", g.Bytes(), inferredRecipes(recipes.Infer(generic).Recipes())})

	custom := []struct {
		q     string
		slurp bool
	}{
		{`select(.title|test("a";"i"))`, false},
		{`select(.namespace|startswith("_semantic")) | {id, title}`, false},
		{`.provenance`, false},
		{`[.[] | .tags[]?] | unique`, true},
		{`group_by(.memory_type) | map(length)`, true},
		{`.metadata // .meta | keys?`, false},
		{`select(.status == "failed") | .meta.owner`, false},
		{`map(.meta.score?) | add`, true},
		{`to_entries | length`, false},
		{`.`, false},
		// Regular expressions: answered from kept expressions, inlined
		// test calls, or gojq's own _match (errors included).
		{`select(.title | test("A"; "x"))`, false},
		{`select(.title | test("["))`, false},
		{`[.title | match("a"; "g") | .offset]`, false},
		{`select(.title | test("s"; "gi")) | .id`, false},
		{`select(.title | test($k))`, false},
		{`[.[] | .title | select(test("quasar"; "i"))] | length`, true},
	}

	for _, f := range files {
		whole, err := jqsandbox.DecodeRecords(bytes.NewReader(f.records), lim)
		require.NoError(t, err)
		check := func(what string, q *jqsandbox.Query, slurp bool, vars []any) {
			mode := jqsandbox.Stream
			if slurp {
				mode = jqsandbox.Slurp
			}
			show := func(res jqsandbox.Result, err error) string {
				return fmt.Sprintf("%s\ntruncated=%v omitted=%d err=%v", bytes.Join(jsonLines(res.Values), []byte("\n")), res.Truncated, res.Omitted, err)
			}
			want := show(q.RunRecords(context.Background(), whole, mode, vars, lim))
			cold := show(q.Run(context.Background(), bytes.NewReader(f.records), mode, vars, lim))
			part, err := jqsandbox.DecodeProjected(bytes.NewReader(f.records), lim, q.Projection(mode))
			require.NoError(t, err)
			cached := show(q.RunRecords(context.Background(), part, mode, vars, lim))
			require.Equal(t, want, cold, "%s %s: streamed with %v", f.name, what, q.Projection(mode))
			require.Equal(t, want, cached, "%s %s: decoded with %v", f.name, what, q.Projection(mode))
		}
		for i, r := range f.recipes {
			// Keywords that match, that match only regardless of case or
			// through a fold (k, s), that match nothing, that are not a
			// valid expression.
			for _, keyword := range []string{"a", "A", "k", "S", "quasar", "[", "(?i)e$"} {
				var names []string
				var vars []any
				for _, p := range r.Params {
					names = append(names, p.Name)
					v := p.Default
					if p.Name == "keyword" {
						v = keyword
					}
					vars = append(vars, v)
				}
				q, err := jqsandbox.CompileTrusted(r.Filter, names)
				require.NoError(t, err)
				check(fmt.Sprintf("recipe %d (%s) with %q", i+1, r.Filter, keyword), q, r.Slurp, vars)
			}
		}
		for _, c := range custom {
			q, err := jqsandbox.Compile(c.q, []string{"k"}, lim)
			require.NoError(t, err)
			check(c.q, q, c.slurp, []any{"(?i)CACHE"})
		}
	}
}

func jsonLines(vs []json.RawMessage) [][]byte {
	out := make([][]byte, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// warmedAgain asks o to warm the file name until its records are cached
// under key: a warming asked while another runs in the process (another
// test's, or the one whose records were just cached, still ending) is
// dropped, by design. Its bound is a minute, for a loaded machine.
func warmedAgain(t *testing.T, o *Offloader, name, key string) {
	t.Helper()
	require.Eventually(t, func() bool {
		if _, ok := o.extractor.Records().Get(key); ok {
			return true
		}
		o.warmExtract(name)
		return false
	}, time.Minute, 10*time.Millisecond, "warmed again")
}

// TestWarmExtract: the records of a file just offloaded are decoded into
// the cache off the call, under the key lro_extract looks up, and not when
// they cannot fit; the write path warms the cache by itself.
func TestWarmExtract(t *testing.T) {
	cfg := DefaultConfig()
	cfg.OutputDir = t.TempDir()
	o, err := New(cfg, WithExtractLimits(ExtractLimits{InProcess: true}))
	require.NoError(t, err)
	defer o.Close()
	o.Host().ExtractToolDefinition() // as AddExtractTool does
	var recs []json.RawMessage
	for _, m := range memstore.Generate(200, 3) {
		v, err := memstore.Project(&m, string(DetailFull))
		require.NoError(t, err)
		line, err := json.Marshal(v)
		require.NoError(t, err)
		recs = append(recs, line)
	}
	out, err := o.Offload(context.Background(), ResultSet{Operation: "recall", Detail: DetailFull, Records: recs})
	require.NoError(t, err)
	require.Equal(t, Offloaded, out.Action)
	name, err := o.ownFile(out.Response.FilePath)
	require.NoError(t, err)
	f, err := o.openOffload(name)
	require.NoError(t, err)
	f.Close()
	require.Eventually(t, func() bool { _, ok := o.extractor.Records().Get(f.key); return ok }, time.Minute, 5*time.Millisecond,
		"the write path warmed it")
	// That warming holds the process's one warming slot until its
	// goroutine ends, a moment after the records are cached; one asked
	// meanwhile is dropped, by design: warmedAgain asks until one runs.
	o.extractor.Records().Forget(name + "\x00")

	warmedAgain(t, o, name, f.key)
	cached, _ := o.extractor.Records().Get(f.key)
	require.Equal(t, len(recs), cached.Len())
	require.True(t, cached.Projection().Whole())
	require.LessOrEqual(t, o.extractor.Records().Used(), int64(DefaultExtractCacheBytes))
	require.Greater(t, o.extractor.Records().Used(), f.size, "counted in decoded bytes, several times the file's")

	o.extractor.Records().Forget(name + "\x00")

	// A cache too small for the file is left alone.
	small, err := New(cfg, WithExtractLimits(ExtractLimits{InProcess: true, CacheBytes: 64 << 10}))
	require.NoError(t, err)
	defer small.Close()
	small.Host().ExtractToolDefinition()
	small.warmExtract(name)
	time.Sleep(100 * time.Millisecond)
	require.Zero(t, small.extractor.Records().Used())

	// The first query is answered from the warmed records.
	warmedAgain(t, o, name, f.key)
	text, err := o.Extract(context.Background(), map[string]any{"file_path": out.Response.FilePath, "recipe": 4})
	require.NoError(t, err)
	require.Contains(t, text, `"id":`)
}
