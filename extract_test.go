package lro_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var fastExtract = lro.WithExtractLimits(lro.ExtractLimits{Timeout: 3 * time.Second, MaxHeapBytes: 256 << 20})

// extractServer returns a client of the memory server with lro_extract.
func extractServer(t *testing.T, mutate func(*lro.Config), opts ...lro.Option) (*client.Client, *lro.Offloader) {
	o := newOffloader(t, mutate, append([]lro.Option{fastExtract}, opts...)...)
	s := memserver.New(testStore, o)
	mcpgo.AddExtractTool(s, o)
	return connect(t, s), o
}

func extract(t *testing.T, c *client.Client, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return callTool(t, c, "lro_extract", args)
}

var noteRE = regexp.MustCompile(`^\[lro_extract: showing (\d+) of (\d+) (results|elements)`)

// jqLines runs the recipe with the jq binary and returns its output lines
// (jq -c), the reference lro_extract must agree with.
func jqLines(t *testing.T, path string, r lro.Recipe, params map[string]string) []string {
	t.Helper()
	testenv.JQ(t)
	args := []string{"-c"}
	if r.Raw {
		args = append(args, "-r")
	}
	if r.Slurp {
		args = append(args, "-s")
	}
	for _, p := range r.Params {
		v, ok := params[p.Name]
		if !ok {
			v = p.Default
		}
		args = append(args, "--arg", p.Name, v)
	}
	args = append(args, r.Filter)
	cmd := exec.Command("jq", args...)
	body := strings.SplitN(string(readFile(t, path)), "\n", 2)[1]
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.Output()
	require.NoError(t, err, "jq %v", args)
	s := strings.TrimSuffix(string(out), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// checkAgainstJQ compares lro_extract's capped output with jq's complete
// output: every shown result equals jq's at the same position, and the
// note counts what jq printed.
func checkAgainstJQ(t *testing.T, got string, want []string, raw bool) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	var shown []string
	var note []string
	for _, l := range lines {
		if m := noteRE.FindStringSubmatch(l); m != nil {
			note = m
			continue
		}
		if l == "[lro_extract: no results]" {
			assert.Empty(t, want)
			return
		}
		shown = append(shown, l)
	}
	if note == nil {
		require.Equal(t, len(want), len(shown), "all results shown")
	}
	if note != nil && note[3] == "elements" {
		// One large array, cut at whole elements.
		require.Len(t, want, 1)
		var all, part []any
		require.NoError(t, json.Unmarshal([]byte(want[0]), &all))
		require.NoError(t, json.Unmarshal([]byte(shown[0]), &part))
		n, _ := strconv.Atoi(note[1])
		assert.Equal(t, n, len(part))
		assert.Equal(t, all[:n], part)
		total, _ := strconv.Atoi(note[2])
		assert.Equal(t, len(all), total, "the note counts every element, encoded or not")
		return
	}
	if note != nil {
		total, _ := strconv.Atoi(note[2])
		assert.Equal(t, len(want), total, "the note counts every result")
	}
	require.LessOrEqual(t, len(shown), len(want))
	for i, s := range shown {
		if raw {
			assert.Equal(t, want[i], s)
			continue
		}
		var a, b any
		require.NoError(t, json.Unmarshal([]byte(s), &a), s)
		require.NoError(t, json.Unmarshal([]byte(want[i]), &b))
		assert.Equal(t, b, a, "result %d", i)
	}
}

func TestExtractEveryRecipeMatchesJQ(t *testing.T) {
	t.Parallel()
	t.Run("workers", func(t *testing.T) { everyRecipeMatchesJQ(t) })
	t.Run("in process", func(t *testing.T) {
		everyRecipeMatchesJQ(t, lro.WithExtractLimits(lro.ExtractLimits{Timeout: 3 * time.Second, MaxHeapBytes: 256 << 20, InProcess: true}))
	})
}

func everyRecipeMatchesJQ(t *testing.T, opts ...lro.Option) {
	c, o := extractServer(t, nil, opts...)
	hit := testStore.Recall("", "", 1)[0].Memory
	params := map[int]map[string]string{
		2: {"namespace": "_episodic"},
		3: {"keyword": firstWord(hit.Title)},
		5: {"type": "procedural"},
		7: {"tag": hit.Tags[0]},
	}
	for _, d := range []lro.Detail{lro.DetailLight, lro.DetailMedium, lro.DetailFull} {
		t.Run(string(d), func(t *testing.T) {
			desc := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "deployment", "limit": 200, "detail": string(d)}))
			assert.Contains(t, desc.Guidance, "lro_extract(file_path=", "the native guidance")
			assert.Len(t, desc.JQRecipes, 10, "jq_recipes stay for shell users")
			recipes := o.Recipes(d)
			for n := 1; n <= 10; n++ {
				p := params[n]
				if n == 10 && d != lro.DetailLight {
					p = map[string]string{"keyword": firstWord(hit.Content)}
				}
				for _, withParams := range []bool{false, true} {
					if withParams && p == nil {
						continue
					}
					args := map[string]any{"file_path": desc.FilePath, "recipe": n}
					var used map[string]string
					if withParams {
						args["params"], used = toAny(p), p
					}
					res := extract(t, c, args)
					require.False(t, res.IsError, "recipe %d: %s", n, textOf(t, res, 0))
					checkAgainstJQ(t, textOf(t, res, 0), jqLines(t, desc.FilePath, recipes[n-1], used), recipes[n-1].Raw)
				}
			}
		})
	}
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestExtractCustomQueries(t *testing.T) {
	c, _ := extractServer(t, nil)
	desc := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 300, "detail": "medium"}))
	res := extract(t, c, map[string]any{"file_path": desc.FilePath, "query": "length", "slurp": true})
	assert.Equal(t, "300\n", textOf(t, res, 0))

	res = extract(t, c, map[string]any{"file_path": desc.FilePath, "query": `select(.memory_type == $t) | .id`, "params": map[string]any{"t": "episodic"}})
	want := jqLines(t, desc.FilePath, lro.Recipe{Filter: `select(.memory_type == $t) | .id`, Params: []lro.RecipeParam{{Name: "t", Default: "episodic"}}}, nil)
	require.NotEmpty(t, want)
	checkAgainstJQ(t, textOf(t, res, 0), want, false)

	// The spec's example of a custom filter.
	res = extract(t, c, map[string]any{"file_path": desc.FilePath, "query": "select(.confidence > 0.8) | {id, confidence}"})
	checkAgainstJQ(t, textOf(t, res, 0), jqLines(t, desc.FilePath, lro.Recipe{Filter: "select(.confidence > 0.8) | {id, confidence}"}, nil), false)

	res = extract(t, c, map[string]any{"file_path": desc.FilePath, "query": `select(.id == "nope")`})
	assert.Equal(t, "[lro_extract: no results]\n", textOf(t, res, 0))
}

func TestExtractCapsItsOwnResults(t *testing.T) {
	c, o := extractServer(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	desc := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 300, "detail": "full"}))
	res := extract(t, c, map[string]any{"file_path": desc.FilePath, "query": "."})
	text := textOf(t, res, 0)
	assert.False(t, isDescriptor(t, res), "lro_extract results are never offloaded, even with WithAnyTool")
	assert.LessOrEqual(t, o.EstimateTokens([]byte(text)), 1600+60, "capped at the threshold, plus the note")
	assert.Regexp(t, `showing \d+ of 300 results \(\d+ left out\); narrow the query`, text)
}

func TestExtractGenericFile(t *testing.T) {
	o := newOffloader(t, nil, fastExtract, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	s, _ := genericServer(t)
	_ = s
	gs := memserver.New(testStore, o)
	gs.AddTool(mcp.NewTool("audit_log"), auditLog(600))
	mcpgo.AddExtractTool(gs, o)
	c := connect(t, gs)
	desc := descriptor(t, callTool(t, c, "audit_log", nil))
	assert.Contains(t, desc.Guidance, "lro_extract", "generic guidance names the tool too")
	res := extract(t, c, map[string]any{"file_path": desc.FilePath, "recipe": 2})
	assert.Equal(t, "600\n", textOf(t, res, 0), "recipe 2 of a generic file counts its records")
}

func TestExtractRefusals(t *testing.T) {
	c, o := extractServer(t, nil)
	desc := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 200}))
	dir := o.Config().OutputDir
	good := desc.FilePath

	outside := filepath.Join(t.TempDir(), "atlatl-recall-01KAQ7Z8M3V4W9X2Y5B6C7D8E9.jsonl")
	require.NoError(t, os.WriteFile(outside, readFile(t, good), 0o600))
	link := filepath.Join(dir, "atlatl-recall-"+nameULID(time.Now())+".jsonl")
	require.NoError(t, os.Symlink(outside, link))
	other := filepath.Join(dir, "notes.jsonl")
	require.NoError(t, os.WriteFile(other, readFile(t, good), 0o600))

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"recipe": 1}, "file_path is required"},
		{map[string]any{"file_path": good}, "exactly one of recipe"},
		{map[string]any{"file_path": good, "recipe": 1, "query": "."}, "exactly one of recipe"},
		{map[string]any{"file_path": good, "recipe": 0}, "recipe must be a whole number from 1 to 10"},
		{map[string]any{"file_path": good, "recipe": 11}, "from 1 to 10"},
		{map[string]any{"file_path": good, "recipe": 2.5}, "from 1 to 10"},
		{map[string]any{"file_path": good, "recipe": "one"}, "from 1 to 10"},
		{map[string]any{"file_path": good, "recipe": 1e19}, "from 1 to 10"},
		{map[string]any{"file_path": good, "recipe": -9.3e18}, "from 1 to 10"},
		{map[string]any{"file_path": good, "recipe": 2, "params": map[string]any{"namespace": strings.Repeat("a", 300)}}, "at most 256"},
		{map[string]any{"file_path": good, "recipe": 2, "params": map[string]any{"namespace": []any{"x"}}}, "must be a string"},
		{map[string]any{"file_path": good, "recipe": 2, "params": map[string]any{"nope": 1}}, `no parameter "nope"`},
		{map[string]any{"file_path": good, "recipe": 1, "params": "x"}, "params must be an object"},
		{map[string]any{"file_path": good, "query": ""}, "non-empty string"},
		{map[string]any{"file_path": "atlatl-recall-x.jsonl", "recipe": 1}, "must be the absolute path"},
		{map[string]any{"file_path": "/etc/passwd", "recipe": 1}, "not in the offload directory"},
		{map[string]any{"file_path": dir + "/../../etc/passwd", "recipe": 1}, "not in the offload directory"},
		{map[string]any{"file_path": outside, "recipe": 1}, "not in the offload directory"},
		{map[string]any{"file_path": other, "recipe": 1}, "not an offloaded file"},
		{map[string]any{"file_path": link, "recipe": 1}, "cannot read"},
		{map[string]any{"file_path": filepath.Join(dir, ".atlatl-recall-01KAQ7Z8M3V4W9X2Y5B6C7D8E9.jsonl.tmp"), "recipe": 1}, "not an offloaded file"},
		{map[string]any{"file_path": filepath.Join(dir, "atlatl-recall-"+nameULID(time.Now())+".jsonl"), "recipe": 1}, "no longer exists"},
		{map[string]any{"file_path": filepath.Join(dir, "atlatl-recall-"+nameULID(time.Now().Add(-2*time.Hour))+".jsonl"), "recipe": 1}, "has expired"},
		{map[string]any{"file_path": good, "query": "input"}, "invalid query"},
		{map[string]any{"file_path": good, "query": `import "a" as a; .`}, "invalid query"},
		{map[string]any{"file_path": good, "query": "select("}, "invalid query"},
		{map[string]any{"file_path": good, "query": strings.Repeat(".", 5000)}, "invalid query"},
		{map[string]any{"file_path": good, "query": ".x", "params": map[string]any{"not-ident": 1}}, "cannot be a jq variable"},
		{map[string]any{"file_path": good, "query": `error("boom")`}, "boom"},
		{map[string]any{"file_path": good, "query": `halt_error`}, "halt_error"},
	} {
		res := extract(t, c, tc.args)
		assert.True(t, res.IsError, "%v: %s", tc.args, textOf(t, res, 0))
		assert.Contains(t, textOf(t, res, 0), tc.want, "%v", tc.args)
	}
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, readFile(t, good), b)

	res := extract(t, c, map[string]any{"file_path": good, "recipe": "6"})
	assert.False(t, res.IsError, "a recipe number given as a string of digits is accepted")

	res = extract(t, c, map[string]any{"file_path": good, "query": "[env, $ENV]"})
	assert.Equal(t, "[{},{}]\n", textOf(t, res, 0)[:8], "no environment reaches a query")
}

func nameULID(t time.Time) string {
	return strings.TrimSuffix(strings.TrimPrefix(nameAt("atlatl", "x", t), "atlatl-x-"), ".jsonl")
}

// TestExtractSurvivesHostileQueries runs queries built to exhaust memory or
// time: each ends with a clear error and the server keeps answering.
// costlyQueries each try to take unbounded time or memory.
var costlyQueries = []string{
	`def f: 1+f; f`,
	`[range(1e9)]`,
	`"x" * 100000000`,
	`"x" * 1e12`,
	`[limit(1e8; repeat("aaaaaaaaaa"))]`,
	`reduce range(1e9) as $i ([]; . + [$i])`,
	`last(range(1e12))`,
}

func TestExtractSurvivesHostileQueries(t *testing.T) {
	testenv.SkipUnlessFull(t) // each query runs to its deadline; TestExtractAttacksAreBounded runs the hostile set through stdio
	c, _ := extractServer(t, nil)
	desc := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 50}))
	for _, q := range costlyQueries {
		start := time.Now()
		res := extract(t, c, map[string]any{"file_path": desc.FilePath, "query": q})
		assert.True(t, res.IsError, "%s: %.200s", q, textOf(t, res, 0))
		assert.Regexp(t, `memory|longer than|too complex|stopped|too large|exceed`, textOf(t, res, 0), q)
		t.Logf("%-45s %v: %s", q, time.Since(start).Round(time.Millisecond), textOf(t, res, 0))

		ok := extract(t, c, map[string]any{"file_path": desc.FilePath, "recipe": 6})
		require.False(t, ok.IsError, "the server still answers after %s", q)
	}
}

func TestExtractExpiredAfterJanitor(t *testing.T) {
	t.Parallel()
	c, _ := extractServer(t, func(c *lro.Config) { c.TTLSeconds = 1 })
	desc := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 50}))
	require.Eventually(t, func() bool {
		_, err := os.Stat(desc.FilePath)
		return os.IsNotExist(err)
	}, 10*time.Second, 20*time.Millisecond)
	res := extract(t, c, map[string]any{"file_path": desc.FilePath, "recipe": 1})
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(t, res, 0), "has expired")
	assert.Contains(t, textOf(t, res, 0), "call the original tool again")
}

// TestExtractToolAnnotations: lro_extract only reads the files it was
// given, the same answer each time: hosts and clients may call it without
// asking.
func TestExtractToolAnnotations(t *testing.T) {
	c, _ := extractServer(t, nil)
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	require.NoError(t, err)
	for _, tl := range tools.Tools {
		if tl.Name != lro.ExtractToolName {
			continue
		}
		a := tl.Annotations
		require.NotNil(t, a.ReadOnlyHint)
		require.NotNil(t, a.DestructiveHint)
		require.NotNil(t, a.IdempotentHint)
		require.NotNil(t, a.OpenWorldHint)
		assert.True(t, *a.ReadOnlyHint, "read-only")
		assert.False(t, *a.DestructiveHint, "non-destructive")
		assert.True(t, *a.IdempotentHint, "idempotent")
		assert.False(t, *a.OpenWorldHint, "closed-world")
		return
	}
	t.Fatal("no lro_extract tool")
}

// TestExtractMemFS: files of an FS that is not a directory of this system
// are queried in workers too, from a local copy.
func TestExtractMemFS(t *testing.T) {
	o, c, path := memFSServer(t)
	res := extract(t, c, map[string]any{"file_path": path, "query": "length", "slurp": true})
	assert.Equal(t, "100\n", textOf(t, res, 0))
	res = extract(t, c, map[string]any{"file_path": path, "recipe": 6})
	assert.False(t, res.IsError, textOf(t, res, 0))
	assert.NotEmpty(t, lro.ExtractWorkerPIDs(o), "workers for files in memory too")
}

// memFSServer returns an Offloader on a MemFS serving lro_extract, a
// client of its server, and the path of a file of 100 memories it wrote.
func memFSServer(t *testing.T) (*lro.Offloader, *client.Client, string) {
	// Limits of its own: workers are shared by the Offloaders of a
	// process that have the same limits.
	lim := lro.ExtractLimits{Timeout: 3 * time.Second, CacheBytes: 12345 << 10}
	o := newOffloader(t, nil, lro.WithExtractLimits(lim), lro.WithFS(lrotest.NewMemFS("/mem/lro")))
	s := memserver.New(testStore, o)
	mcpgo.AddExtractTool(s, o)
	c := connect(t, s)
	return o, c, offloadedPath(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 100}))
}

// TestExtractRegexes: searches by regular expression answer alike in
// workers and in process, as jq does for words, and fail with gojq's own
// words for an expression or a flag it refuses.
func TestExtractRegexes(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name string
		opts []lro.Option
	}{
		{"workers", nil},
		{"in process", []lro.Option{lro.WithExtractLimits(lro.ExtractLimits{InProcess: true})}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			c, o := extractServer(t, nil, mode.opts...)
			desc := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "deployment", "limit": 200, "detail": "full"}))
			hit := testStore.Recall("", "", 1)[0].Memory
			for _, keyword := range []string{firstWord(hit.Title), strings.ToUpper(firstWord(hit.Content)), "kubernetes", "quasar"} {
				for _, n := range []int{3, 10} {
					res := extract(t, c, map[string]any{"file_path": desc.FilePath, "recipe": n, "params": map[string]any{"keyword": keyword}})
					require.False(t, res.IsError, "recipe %d %q: %s", n, keyword, textOf(t, res, 0))
					recipe := o.Recipes(lro.DetailFull)[n-1]
					checkAgainstJQ(t, textOf(t, res, 0), jqLines(t, desc.FilePath, recipe, map[string]string{"keyword": keyword}), recipe.Raw)
				}
			}
			for _, tc := range []struct{ args, want string }{
				{`{"recipe": 3, "params": {"keyword": "["}}`, `invalid regular expression "(?i)[": error parsing regexp: missing closing ]: ` + "`[`"},
				{`{"query": "select(.title | test(\"a\"; \"x\"))"}`, `unsupported regular expression flag: "x"`},
				{`{"query": "select(.title | test($k; \"gi\")) | .id", "params": {"k": "("}}`, `invalid regular expression "(?i)("`},
			} {
				var args map[string]any
				require.NoError(t, json.Unmarshal([]byte(tc.args), &args))
				args["file_path"] = desc.FilePath
				res := extract(t, c, args)
				require.True(t, res.IsError, tc.args)
				assert.Contains(t, textOf(t, res, 0), tc.want, tc.args)
			}
		})
	}
}
