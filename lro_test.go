package lro_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

// perRecord counts one token for each record, so that thresholds in tests
// are exact.
var perRecord = lro.WithEstimator(lro.EstimatorFunc(func([]byte) int { return 1 }))

func TestThresholdBoundary(t *testing.T) {
	o := newOffloader(t, func(c *lro.Config) { c.ThresholdTokens = 10 }, perRecord)
	recs := memories(t, 11, lro.DetailLight)

	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs[:10]})
	require.NoError(t, err)
	assert.Equal(t, lro.Inline, out.Action, "estimate == threshold stays inline")
	assert.Equal(t, 10, out.Tokens)
	assert.Nil(t, out.Response)

	out, err = o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
	require.NoError(t, err)
	assert.Equal(t, lro.Offloaded, out.Action, "estimate > threshold offloads")
	assert.Equal(t, 11, out.Response.Summary.Count)
}

func TestThresholdAppliesToWholeSet(t *testing.T) {
	o := newOffloader(t, nil)
	// A single memory is returned inline; many small ones are offloaded together.
	single := memories(t, 1, lro.DetailFull)
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: single, Detail: lro.DetailFull})
	require.NoError(t, err)
	assert.Equal(t, lro.Inline, out.Action)

	many := memories(t, 40, lro.DetailFull) // each small, together over 1600
	out, err = o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: many, Detail: lro.DetailFull})
	require.NoError(t, err)
	assert.Equal(t, lro.Offloaded, out.Action)
	assert.Greater(t, out.Tokens, 1600)
}

func TestTokensOverrideEstimate(t *testing.T) {
	o := newOffloader(t, nil)
	recs := memories(t, 2, lro.DetailLight)
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs, Tokens: 5000})
	require.NoError(t, err)
	assert.Equal(t, lro.Offloaded, out.Action)
	assert.Equal(t, 5000, out.Response.Summary.EstimatedTokens)
}

func TestDisabledStaysInline(t *testing.T) {
	o := newOffloader(t, func(c *lro.Config) { c.Enabled = lro.Bool(false) })
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 500, lro.DetailFull)})
	require.NoError(t, err)
	assert.Equal(t, lro.Inline, out.Action)
	entries, _ := os.ReadDir(o.Config().OutputDir)
	assert.Empty(t, entries)
}

var fileNameRE = regexp.MustCompile(`^atlatl-recall-[0-9A-HJKMNP-TV-Z]{26}\.jsonl$`)

func TestOffloadedFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir })
	recs := memories(t, 200, lro.DetailMedium)
	query := "caching strategy"
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Query: &query, Detail: lro.DetailMedium, Records: recs})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)

	path := out.Response.FilePath
	assert.True(t, filepath.IsAbs(path))
	assert.Equal(t, dir, filepath.Dir(path))
	assert.Regexp(t, fileNameRE, filepath.Base(path))

	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "file is private")
	di, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), di.Mode().Perm(), "a directory the engine creates is private")

	h, lines := readJSONL(t, readFile(t, path))
	assert.Equal(t, "lro_header", h.Type)
	assert.Equal(t, "recall", h.Operation)
	require.NotNil(t, h.Query)
	assert.Equal(t, query, *h.Query)
	assert.Equal(t, 200, h.Count)
	assert.Equal(t, "1.0", h.SchemaVersion)
	assert.Equal(t, lro.DetailMedium, h.Detail)
	assert.Equal(t, out.Tokens, h.EstimatedTokens)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, h.Timestamp)
	require.Len(t, lines, 200)
	for i := range recs {
		assert.Equal(t, string(recs[i]), string(lines[i]), "record %d is written exactly as given", i)
	}

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestHeaderQueryNullWhenAbsent(t *testing.T) {
	o := newOffloader(t, nil)
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "list", Records: memories(t, 100, lro.DetailLight)})
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(readFile(t, out.Response.FilePath)), "\n")
	assert.Contains(t, first, `"query":null`)
	assert.Contains(t, first, `"detail":"light"`, "light is the default detail")
}

func TestRecordLineBreaksAreCompacted(t *testing.T) {
	o := newOffloader(t, func(c *lro.Config) { c.ThresholdTokens = 1 })
	recs := []json.RawMessage{json.RawMessage("{\n  \"a\": 1,\r\n  \"b\": \"x y\"\n}"), json.RawMessage(`[1, 2]`)}
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "tool", Generic: true, Records: recs})
	require.NoError(t, err)
	_, lines := readJSONL(t, readFile(t, out.Response.FilePath))
	require.Len(t, lines, 2)
	assert.Equal(t, `{"a":1,"b":"x y"}`, string(lines[0]))
	assert.Equal(t, `[1, 2]`, string(lines[1]), "records without line breaks are not rewritten")
}

func TestBadInputIsAClearError(t *testing.T) {
	o := newOffloader(t, func(c *lro.Config) { c.ThresholdTokens = 1 })
	recs := memories(t, 3, lro.DetailLight)
	for _, op := range []string{"", "../escape", "a/b", "a b", "recall-2", strings.Repeat("x", 65)} {
		_, err := o.Offload(ctx, lro.ResultSet{Operation: op, Records: recs})
		require.Error(t, err, "operation %q", op)
		assert.Contains(t, err.Error(), "operation")
	}
	_, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: "verbose", Records: recs})
	require.ErrorContains(t, err, `"verbose"`)

	_, err = o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: []json.RawMessage{json.RawMessage("{\n")}, Tokens: 100})
	var re *lro.RecordError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 0, re.Index)

	entries, _ := os.ReadDir(o.Config().OutputDir)
	assert.Empty(t, entries, "no file for rejected input")
}

func TestSummary(t *testing.T) {
	o := newOffloader(t, func(c *lro.Config) { c.ThresholdTokens = 1 })
	ns := []string{"_a", "_b", "_b", "_c", "_c", "_c", "_d", "_e", "_f", "_f"}
	var recs []json.RawMessage
	for _, n := range ns {
		recs = append(recs, json.RawMessage(`{"id":"x","namespace":"`+n+`"}`))
	}
	recs = append(recs, json.RawMessage(`{"id":"y","namespace":"_f\u0000"}`), json.RawMessage(`{"id":"z"}`))
	extra := map[string]json.RawMessage{"total": json.RawMessage(`742`)}
	out, err := o.Offload(ctx, lro.ResultSet{
		Operation: "search", Records: recs, Scores: []float64{0.4, 0.91, 0.12}, Extra: extra,
	})
	require.NoError(t, err)
	s := out.Response.Summary
	assert.Equal(t, []string{"_c", "_b", "_f", "_a", "_d"}, s.TopNamespaces, "by frequency, then name")
	require.NotNil(t, s.ScoreRange)
	assert.Equal(t, [2]float64{0.12, 0.91}, *s.ScoreRange)
	assert.Equal(t, "search", s.Operation)
	assert.Equal(t, 12, s.Count)

	b, err := json.Marshal(out.Response)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"extra":{"total":742}`)
	_, records, _ := strings.Cut(string(readFile(t, out.Response.FilePath)), "\n") // the header's timestamp may hold "0.91"
	assert.NotContains(t, records, "0.91", "scores never go into the file")

	out, err = o.Offload(ctx, lro.ResultSet{Operation: "search", Records: recs})
	require.NoError(t, err)
	b, _ = json.Marshal(out.Response.Summary)
	assert.Contains(t, string(b), `"score_range":null`)
	assert.NotContains(t, string(b), `"extra"`)
}

func TestClosedOffloaderRefuses(t *testing.T) {
	o := newOffloader(t, nil)
	require.NoError(t, o.Close())
	require.NoError(t, o.Close(), "Close is idempotent")
	_, err := o.Offload(ctx, lro.ResultSet{Operation: "recall"})
	assert.ErrorIs(t, err, lro.ErrClosed)
}

func TestRecipesAreTen(t *testing.T) {
	o := newOffloader(t, nil)
	for _, d := range []lro.Detail{lro.DetailLight, lro.DetailMedium, lro.DetailFull} {
		out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: d, Records: memories(t, 100, d)})
		require.NoError(t, err)
		require.Len(t, out.Response.JQRecipes, 10)
		for i, r := range out.Response.JQRecipes {
			assert.True(t, strings.HasPrefix(r.Command, "tail -n +2 "+out.Response.FilePath+" | jq "), "recipe %d: %s", i+1, r.Command)
			assert.NotContains(t, r.Command, ".score", "recipes never use .score")
		}
		all := out.Response.JQRecipes[8].Command + out.Response.JQRecipes[9].Command
		switch d {
		case lro.DetailLight:
			assert.NotContains(t, all, "confidence")
			assert.NotContains(t, all, ".content")
		case lro.DetailMedium:
			assert.Contains(t, all, "sort_by(.confidence)")
			assert.NotContains(t, all, "provenance")
			assert.Contains(t, all, ".content")
		case lro.DetailFull:
			assert.Contains(t, all, "sort_by(.provenance.confidence)")
			assert.Contains(t, all, ".content")
		}
	}
}

func TestPathIsShellQuoted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "it's a dir")
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir })
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailLight)})
	require.NoError(t, err)
	want := `tail -n +2 '` + strings.ReplaceAll(out.Response.FilePath, "'", `'\''`) + `' | jq `
	assert.True(t, strings.HasPrefix(out.Response.JQRecipes[0].Command, want), out.Response.JQRecipes[0].Command)
}

func TestGuidance(t *testing.T) {
	o := newOffloader(t, nil)
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: memories(t, 50, lro.DetailFull)})
	require.NoError(t, err)
	g := out.Response.Guidance
	assert.Contains(t, g, "50 memories at full detail", "the count and the detail level")
	assert.NotContains(t, g, out.Response.FilePath, "file_path carries it")
	assert.Contains(t, g, "Use the jq recipes above", "advisory, not imperative")
	assert.Contains(t, g, "line 1 is a header")
}

func TestTemplatesOverride(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "guidance_shell.tmpl"), []byte("{{.Count}} rows at {{.Path}}"), 0o600))
	o := newOffloader(t, nil, lro.WithTemplates(os.DirFS(dir)))
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailLight)})
	require.NoError(t, err)
	assert.Equal(t, "100 rows at "+out.Response.FilePath, out.Response.Guidance)
	assert.Len(t, out.Response.JQRecipes, 10, "files the override lacks keep the built-in text")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "recipes.tmpl"), []byte("recipe: only one\nfilter: .\n"), 0o600))
	_, err = lro.New(lro.DefaultConfig(), lro.WithTemplates(os.DirFS(dir)))
	require.ErrorContains(t, err, "1 recipes, want 10", "a broken override fails New, not a tool call")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "recipes.tmpl"), []byte("{{.Nope}"), 0o600))
	_, err = lro.New(lro.DefaultConfig(), lro.WithTemplates(os.DirFS(dir)))
	require.ErrorContains(t, err, "recipes.tmpl")
}

func TestInvalidRecordsAreRefused(t *testing.T) {
	o := newOffloader(t, func(c *lro.Config) { c.ThresholdTokens = 1 })
	for _, bad := range []string{`{not json`, `{"a":1}}`, `[1,]`, ``, `1 2`} {
		recs := append(memories(t, 3, lro.DetailLight), json.RawMessage(bad))
		_, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs, Tokens: 100})
		var re *lro.RecordError
		require.ErrorAs(t, err, &re, "%q", bad)
		assert.Equal(t, 3, re.Index)
	}
	entries, _ := os.ReadDir(o.Config().OutputDir)
	assert.Empty(t, entries, "no file for rejected records")
}

func TestInvalidPoliciesFailNew(t *testing.T) {
	_, err := lro.New(lro.DefaultConfig(), lro.WithTool("x", lro.ToolPolicy{Operation: "my-op"}))
	assert.ErrorContains(t, err, `invalid operation "my-op"`)
	_, err = lro.New(lro.DefaultConfig(), lro.WithAnyTool(lro.ToolPolicy{DefaultDetail: "FULL"}))
	assert.ErrorContains(t, err, `"FULL"`)
}

func TestRecipesAreCopies(t *testing.T) {
	o := newOffloader(t, nil)
	r := o.Recipes(lro.DetailLight)
	r[0].Filter = "broken"
	assert.NotEqual(t, "broken", o.Recipes(lro.DetailLight)[0].Filter)
}
