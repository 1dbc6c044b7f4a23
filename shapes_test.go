package lro_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serve runs res through o.Serve as the result of tool, and returns what
// goes out.
func serve(t *testing.T, o *lro.Offloader, tool string, args map[string]any, res host.Result) host.Result {
	t.Helper()
	out, replaced, err := o.Host().Serve(context.Background(), host.Call{Tool: tool, Arguments: args},
		func(context.Context) (host.Result, error) { return res, nil })
	require.NoError(t, err)
	if !replaced {
		return res
	}
	return out
}

// descriptorIn returns the descriptor in content item i of res.
func descriptorIn(t *testing.T, res host.Result, i int) (lro.OffloadResponse, string) {
	t.Helper()
	require.False(t, res.IsError)
	require.Greater(t, len(res.Content), i)
	text := res.Content[i].Text
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(text), &d), "%.300s", text)
	require.True(t, d.Offloaded, "%.300s", text)
	return d, text
}

func ticket(i int) map[string]any {
	return map[string]any{
		"id":       fmt.Sprintf("T-%04d", i),
		"status":   []string{"open", "closed", "pending"}[i%3],
		"priority": i % 5,
		"title":    fmt.Sprintf("Ticket %d: the login page times out for user %d", i, i*7),
	}
}

func tickets(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = ticket(i)
	}
	return out
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// fileRecords returns the header and records of an offloaded file.
func fileRecords(t *testing.T, path string) (lro.OffloadHeader, [][]byte) {
	t.Helper()
	return readJSONL(t, readFile(t, path))
}

func genericOffloader(t *testing.T, opts ...lro.Option) *lro.Offloader {
	return newOffloader(t, nil, append([]lro.Option{lro.WithAnyTool(lro.ToolPolicy{Generic: true})}, opts...)...)
}

func TestSeveralTextItems(t *testing.T) {
	o := genericOffloader(t)

	// A summary line beside the data: the data is offloaded, the summary stays.
	res := serve(t, o, "tickets", nil, host.Result{Content: []host.Content{
		host.TextContent("Found 600 tickets."),
		host.TextContent(mustJSON(t, tickets(600))),
	}})
	require.Len(t, res.Content, 2)
	assert.Equal(t, "Found 600 tickets.", res.Content[0].Text)
	d, _ := descriptorIn(t, res, 1)
	assert.Equal(t, 600, d.Summary.Count)
	h, lines := fileRecords(t, d.FilePath)
	assert.Equal(t, 600, h.Count)
	assert.JSONEq(t, mustJSON(t, ticket(599)), string(lines[599]))

	// One item a record: every item is a line of the file, in order.
	var items []host.Content
	for _, tk := range tickets(700) {
		items = append(items, host.TextContent(mustJSON(t, tk)))
	}
	res = serve(t, o, "tickets", nil, host.Result{Content: items})
	require.Len(t, res.Content, 1)
	d, _ = descriptorIn(t, res, 0)
	assert.Equal(t, 700, d.Summary.Count)
	_, lines = fileRecords(t, d.FilePath)
	assert.JSONEq(t, mustJSON(t, ticket(42)), string(lines[42]))

	// Items of prose: {"item", "text"} records.
	items = items[:0]
	for i := range 500 {
		items = append(items, host.TextContent(fmt.Sprintf("Paragraph %d. The cache was warmed before the deploy and kept warm.", i)))
	}
	d, _ = descriptorIn(t, serve(t, o, "notes", nil, host.Result{Content: items}), 0)
	_, lines = fileRecords(t, d.FilePath)
	require.Len(t, lines, 500)
	assert.JSONEq(t, `{"item":3,"text":"Paragraph 2. The cache was warmed before the deploy and kept warm."}`, string(lines[2]))
}

func TestEmbeddedResourceAndOtherItems(t *testing.T) {
	o := genericOffloader(t)
	image := struct{ Data string }{"iVBORw0KGgo="}
	res := serve(t, o, "export", nil, host.Result{Content: []host.Content{
		{Other: image},
		{URI: "file:///export.json", Text: mustJSON(t, tickets(400)), Other: "the host's resource item"},
	}})
	require.Len(t, res.Content, 2)
	assert.Equal(t, image, res.Content[0].Other, "an image stays as it was, where it was")
	d, _ := descriptorIn(t, res, 1)
	assert.Equal(t, 400, d.Summary.Count)
	assert.Nil(t, res.Content[1].Other, "the resource is replaced by the descriptor")
}

func TestStructuredContentAlone(t *testing.T) {
	o := genericOffloader(t)
	res := serve(t, o, "export", nil, host.Result{Structured: map[string]any{"rows": tickets(400), "total": 1234}})
	require.Empty(t, res.Content, "no text went in, so no text comes out")
	raw, ok := res.Structured.(json.RawMessage)
	require.True(t, ok, "%T", res.Structured)
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal(raw, &d))
	assert.True(t, d.Offloaded)
	assert.Equal(t, 400, d.Summary.Count)
	assert.Equal(t, "rows", d.Section)
	assert.JSONEq(t, `{"total":1234}`, mustJSON(t, d.Summary.Extra))
}

func TestNestedRecords(t *testing.T) {
	o := genericOffloader(t)
	body := mustJSON(t, map[string]any{"data": map[string]any{"items": tickets(500), "total": 900}, "ok": true})
	d, _ := descriptorIn(t, serve(t, o, "tickets", nil, host.Result{Content: []host.Content{host.TextContent(body)}}), 0)
	assert.Equal(t, "data.items", d.Section)
	assert.Equal(t, 500, d.Summary.Count)
	assert.JSONEq(t, `{"data.total":900,"ok":true}`, mustJSON(t, d.Summary.Extra))
	_, lines := fileRecords(t, d.FilePath)
	assert.JSONEq(t, mustJSON(t, ticket(7)), string(lines[7]), "a record per element, not one escaped line")

	// A path in the policy picks the records even beside a larger field.
	o = newOffloader(t, nil, lro.WithTool("report", lro.ToolPolicy{Generic: true, RecordsField: "data.items"}))
	body = mustJSON(t, map[string]any{"data": map[string]any{"items": tickets(100)}, "log": tickets(600)})
	d, _ = descriptorIn(t, serve(t, o, "report", nil, host.Result{Content: []host.Content{host.TextContent(body)}}), 0)
	assert.Equal(t, "data.items", d.Section)
	assert.Equal(t, 100, d.Summary.Count)
	require.Len(t, d.Sections, 1)
	assert.Equal(t, "log", d.Sections[0].Section)
	assert.Equal(t, 600, d.Sections[0].Count)
}

func graph(nodes, edges int) map[string]any {
	ns := make([]any, nodes)
	for i := range ns {
		ns[i] = map[string]any{"id": fmt.Sprintf("mem-%04d", i), "namespace": []string{"_semantic", "_episodic"}[i%2]}
	}
	es := make([]any, edges)
	for i := range es {
		es[i] = map[string]any{"from": fmt.Sprintf("mem-%04d", i%nodes), "to": fmt.Sprintf("mem-%04d", (i*7+1)%nodes), "relation": []string{"tag", "namespace"}[i%2]}
	}
	return map[string]any{"generated": "2026-11-23T10:00:00Z", "limit": nodes, "nodes": ns, "edges": es}
}

func TestSectionsOneFileEach(t *testing.T) {
	o := genericOffloader(t)
	res := serve(t, o, "memory_graph", nil, host.Result{Content: []host.Content{host.TextContent(mustJSON(t, graph(300, 900)))}})
	d, text := descriptorIn(t, res, 0)
	assert.Equal(t, "edges", d.Section, "the largest section is the descriptor's file")
	assert.Equal(t, 900, d.Summary.Count)
	assert.Len(t, d.JQRecipes, lro.RecipeCount)
	require.Len(t, d.Sections, 1)
	s := d.Sections[0]
	assert.Equal(t, "nodes", s.Section)
	assert.Equal(t, 300, s.Count)
	assert.NotEqual(t, d.FilePath, s.FilePath)
	assert.Contains(t, filepath.Base(s.FilePath), "-memory_graph_nodes-", "same naming rules, the section in the operation")
	assert.NotEmpty(t, s.JQRecipes)
	assert.JSONEq(t, `{"generated":"2026-11-23T10:00:00Z","limit":300}`, mustJSON(t, d.Summary.Extra))
	assert.Contains(t, d.Guidance, "edges field")

	h, lines := fileRecords(t, s.FilePath)
	assert.Equal(t, 300, h.Count)
	assert.Equal(t, "memory_graph_nodes", h.Operation)
	require.Len(t, lines, 300)
	assert.JSONEq(t, `{"id":"mem-0299","namespace":"_episodic"}`, string(lines[299]))
	h, lines = fileRecords(t, d.FilePath)
	assert.Equal(t, 900, h.Count)
	assert.Len(t, lines, 900)

	for _, r := range append(d.JQRecipes, s.JQRecipes...) {
		if strings.HasPrefix(r.Description, "Count the records") {
			out := runShell(t, r.Command, false)
			assert.Contains(t, []any{900.0, 300.0}, out.values[0], r.Command)
		}
	}
	assert.Less(t, len(text)/4, 1100, "two sections: %d tokens", len(text)/4)
}

func TestSectionsStayCompact(t *testing.T) {
	o := genericOffloader(t)
	wide := map[string]any{}
	for i := range 12 {
		wide[fmt.Sprintf("table_%02d", i)] = tickets(60 + i)
	}
	wide["note"] = strings.Repeat("a long note that is not a record set. ", 100)
	d, text := descriptorIn(t, serve(t, o, "dump", nil, host.Result{Content: []host.Content{host.TextContent(mustJSON(t, wide))}}), 0)
	assert.Len(t, d.Sections, 12, "eleven tables and the long note, besides the largest table")
	total := d.Summary.Count
	for _, s := range d.Sections {
		total += s.Count
		assert.LessOrEqual(t, len(s.JQRecipes), 3)
	}
	assert.Equal(t, 12*60+66+1, total, "every record of every table, and the note's one line")
	assert.Nil(t, d.Summary.Extra, "nothing large is copied into the descriptor")
	assert.NotContains(t, text, "a long note")
	t.Logf("12 sections: %d tokens", len(text)/4)
	assert.Less(t, len(text)/4, 2000)
}

// TestManySmallFieldsAreRecords: an object of hundreds of small fields is a
// map, whose members are the records, read in place (issue 22.8).
func TestManySmallFieldsAreRecords(t *testing.T) {
	o := genericOffloader(t)
	flat := map[string]any{}
	for i := range 600 {
		flat[fmt.Sprintf("setting_%03d", i)] = fmt.Sprintf("value %d", i)
	}
	d, text := descriptorIn(t, serve(t, o, "settings", nil, host.Result{Content: []host.Content{host.TextContent(mustJSON(t, flat))}}), 0)
	assert.Empty(t, d.Section, "a map of small fields is the records themselves")
	assert.Equal(t, 600, d.Summary.Count)
	assert.Less(t, len(text)/4, 1000)
	_, lines := fileRecords(t, d.FilePath)
	var rec struct{ Key, Value string }
	require.NoError(t, json.Unmarshal(lines[0], &rec))
	assert.Equal(t, flat[rec.Key], rec.Value)
}

// TestPageWithCursorIsRefusedNamingALimit: a page over the threshold that
// still has an active cursor is neither offloaded (the file would hide the
// other pages) nor cut (the records cut would be lost behind the cursor,
// issue 39): it is a tool error naming a page size that fits, and a page
// of that size goes out inline, whole.
func TestPageWithCursorIsRefusedNamingALimit(t *testing.T) {
	var logs bytes.Buffer
	o := genericOffloader(t, lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	pageOf := func(n int, cursor map[string]any) host.Result {
		page := map[string]any{"items": tickets(500)[:n]}
		maps.Copy(page, cursor)
		return host.Result{Content: []host.Content{host.TextContent(mustJSON(t, page))}}
	}
	for _, c := range []struct {
		name   string
		args   map[string]any
		schema string
		cursor map[string]any
		ask    *regexp.Regexp
	}{
		{"limit given", map[string]any{"limit": 500.0}, "", map[string]any{"next_cursor": "500"}, regexp.MustCompile(`"limit": (\d+) \(or less\)`)},
		{"page_size declared", nil, `{"type":"object","properties":{"q":{},"page_size":{"type":"integer"}}}`, map[string]any{"nextCursor": "abc"}, regexp.MustCompile(`"page_size": (\d+) \(or less\)`)},
		{"no page size", nil, "", map[string]any{"has_more": true}, regexp.MustCompile(`at most (\d+) records a page`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			call := host.Call{Tool: "tickets", Arguments: c.args}
			if c.schema != "" {
				call.InputSchema = func() json.RawMessage { return json.RawMessage(c.schema) }
			}
			res, replaced, err := o.Host().Serve(context.Background(), call, func(context.Context) (host.Result, error) { return pageOf(500, c.cursor), nil })
			require.NoError(t, err)
			require.True(t, replaced)
			require.True(t, res.IsError, "%v", res.Content)
			require.Len(t, res.Content, 1)
			text := res.Content[0].Text
			assert.Contains(t, text, "this page of 500 records")
			assert.Contains(t, text, "nothing of it was sent")
			m := c.ask.FindStringSubmatch(text)
			require.NotNil(t, m, text)
			n, _ := strconv.Atoi(m[1])
			require.Positive(t, n)
			require.Less(t, n, 500)

			// A page of that size goes out as the handler sent it.
			page := pageOf(n, c.cursor)
			res, replaced, err = o.Host().Serve(context.Background(), call, func(context.Context) (host.Result, error) { return page, nil })
			require.NoError(t, err)
			assert.False(t, replaced, "%.300v", res.Content)
		})
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "pages by itself"), logs.String())
	assert.Contains(t, logs.String(), "lro.Collect")

	// The last page has no active cursor: offloaded.
	last := mustJSON(t, map[string]any{"items": tickets(500), "next_cursor": nil, "has_more": false})
	d, _ := descriptorIn(t, serve(t, o, "tickets", nil, host.Result{Content: []host.Content{host.TextContent(last)}}), 0)
	assert.Equal(t, 500, d.Summary.Count)
}

func TestSearchToolsJudgedByTheirRecords(t *testing.T) {
	o := genericOffloader(t)
	// A search tool of tickets under WithAnyTool: generic, and its own
	// detail argument is the tool's business.
	res := serve(t, o, "search_tickets", map[string]any{"query": "login", "detail": "brief"},
		host.Result{Content: []host.Content{host.TextContent(mustJSON(t, tickets(500)))}})
	d, text := descriptorIn(t, res, 0)
	assert.Equal(t, "search_tickets", d.Summary.Operation)
	assert.NotContains(t, text, "top_namespaces")
	assert.NotContains(t, text, `"detail"`)
	assert.NotContains(t, text, "memories")
	assert.NotContains(t, d.Guidance, "Detail level")
	h, _ := fileRecords(t, d.FilePath)
	assert.Equal(t, lro.GenericSchemaVersion, h.SchemaVersion)

	// A search tool of memories: memory recipes and summary.
	mems := memories(t, 300, lro.DetailLight)
	res = serve(t, o, "search_memories", map[string]any{"query": "cache"},
		host.Result{Content: []host.Content{host.TextContent(mustJSON(t, mems))}})
	d, text = descriptorIn(t, res, 0)
	assert.Equal(t, "search", d.Summary.Operation)
	assert.Equal(t, lro.DetailLight, d.Summary.Detail)
	assert.Contains(t, text, "top_namespaces")
	assert.Len(t, d.JQRecipes, lro.RecipeCount)

	// The specification's tools still refuse a detail that is not a level.
	res = serve(t, o, "recall_memories", map[string]any{"detail": "brief"}, host.Result{})
	assert.True(t, res.IsError)
}

func TestGenericDescriptorSpeaksOfLines(t *testing.T) {
	o := genericOffloader(t)
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "2026-11-23T10:00:%02dZ worker-%d processed batch %d\n", i%60, i%4, i)
	}
	d, text := descriptorIn(t, serve(t, o, "tail_log", nil, host.Result{Content: []host.Content{host.TextContent(b.String())}}), 0)
	assert.Contains(t, d.Guidance, "3000 lines")
	assert.NotContains(t, text, "memor")
	assert.NotContains(t, text, "top_namespaces")
}

func TestSectionsFallBackWhole(t *testing.T) {
	mem := lrotest.NewMemFS("/lro")
	var rec recorder
	o := genericOffloader(t, lro.WithFS(mem), lro.WithHooks(rec.hooks()))
	mem.FailCreate(syscall.ENOSPC)
	res := serve(t, o, "memory_graph", nil, host.Result{Content: []host.Content{host.TextContent(mustJSON(t, graph(300, 900)))}})
	require.Len(t, res.Content, 2)
	var g struct {
		Generated string `json:"generated"`
		Nodes     []any  `json:"nodes"`
		Edges     []any  `json:"edges"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &g), "the truncated result keeps its shape")
	assert.Equal(t, "2026-11-23T10:00:00Z", g.Generated)
	assert.NotEmpty(t, g.Nodes)
	assert.NotEmpty(t, g.Edges)
	assert.Less(t, len(g.Edges), 900)
	assert.LessOrEqual(t, o.EstimateTokens([]byte(res.Content[0].Text)), o.Config().ThresholdTokens)
	assert.Contains(t, res.Content[1].Text, fmt.Sprintf("truncated to %d of 1200 records", len(g.Nodes)+len(g.Edges)))
	require.Len(t, rec.failed, 1)
	assert.Equal(t, len(g.Nodes)+len(g.Edges), rec.failed[0].Kept)
	assert.Empty(t, mem.Names(), "no file of either section is left")

	// The second section's write fails: the first one's file is removed.
	mem2 := lrotest.NewMemFS("/lro")
	o = genericOffloader(t, lro.WithFS(mem2))
	mem2.FailWrite(2, syscall.EIO) // the first file is one buffered write; the second fails
	res = serve(t, o, "memory_graph", nil, host.Result{Content: []host.Content{host.TextContent(mustJSON(t, graph(300, 900)))}})
	require.Len(t, res.Content, 2)
	assert.Contains(t, res.Content[1].Text, "offloading failed")
	assert.Empty(t, mem2.Names(), "all or none")
}

// An object of records keyed by id, named by the policy, is one {"key",
// "value"} record per member; its fallback keeps the leading members.
func TestKeyedObjectRecords(t *testing.T) {
	index := map[string]any{}
	for i := range 400 {
		index[fmt.Sprintf("T-%04d", i)] = ticket(i)
	}
	body := mustJSON(t, map[string]any{"index": index, "version": 3})
	o := newOffloader(t, nil, lro.WithTool("index", lro.ToolPolicy{Generic: true, RecordsField: "index"}))
	d, _ := descriptorIn(t, serve(t, o, "index", nil, host.Result{Content: []host.Content{host.TextContent(body)}}), 0)
	assert.Equal(t, "index", d.Section)
	assert.Equal(t, 400, d.Summary.Count)
	_, lines := fileRecords(t, d.FilePath)
	var rec struct {
		Key   string
		Value map[string]any
	}
	require.NoError(t, json.Unmarshal(lines[0], &rec))
	assert.Equal(t, "T-0000", rec.Key)
	assert.Equal(t, "T-0000", rec.Value["id"])

	mem := lrotest.NewMemFS("/lro")
	mem.FailCreate(syscall.EACCES)
	o = newOffloader(t, nil, lro.WithFS(mem), lro.WithTool("index", lro.ToolPolicy{Generic: true, RecordsField: "index"}))
	res := serve(t, o, "index", nil, host.Result{Content: []host.Content{host.TextContent(body)}})
	require.Len(t, res.Content, 2)
	var cut struct {
		Index   map[string]map[string]any `json:"index"`
		Version int                       `json:"version"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &cut), "%.300s", res.Content[0].Text)
	assert.Equal(t, 3, cut.Version)
	require.NotEmpty(t, cut.Index)
	assert.Less(t, len(cut.Index), 400)
	assert.Equal(t, "T-0001", cut.Index["T-0001"]["id"], "members are cut whole")
}

// A long string field is offloaded a line a record; its fallback keeps
// the leading lines in the same field.
func TestLongStringField(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "line %d of the build log\n", i+1)
	}
	body := mustJSON(t, map[string]any{"log": b.String(), "status": "failed"})
	o := genericOffloader(t)
	d, _ := descriptorIn(t, serve(t, o, "build", nil, host.Result{Content: []host.Content{host.TextContent(body)}}), 0)
	assert.Equal(t, "log", d.Section)
	assert.Equal(t, 2000, d.Summary.Count)
	assert.Contains(t, d.Guidance, "2000 lines")
	_, lines := fileRecords(t, d.FilePath)
	assert.JSONEq(t, `{"line":7,"text":"line 7 of the build log"}`, string(lines[6]))

	mem := lrotest.NewMemFS("/lro")
	mem.FailCreate(syscall.EACCES)
	o = genericOffloader(t, lro.WithFS(mem))
	res := serve(t, o, "build", nil, host.Result{Content: []host.Content{host.TextContent(body)}})
	var cut struct{ Log, Status string }
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &cut))
	assert.Equal(t, "failed", cut.Status)
	assert.True(t, strings.HasSuffix(cut.Log, " …[cut]"), "a text cut says so")
	cut.Log = strings.TrimSuffix(cut.Log, " …[cut]")
	assert.True(t, strings.HasPrefix(b.String(), cut.Log), "the leading lines, whole")
	assert.Less(t, len(cut.Log), b.Len())
	assert.NotEmpty(t, cut.Log)
}

// TestBlankLinesMakeNoRecords: a text's empty lines get no record of their
// own (9 MB of newlines made a 242 MB file), its other lines keep their
// numbers, and a fallback that keeps a line keeps the blank lines before it.
func TestBlankLinesMakeNoRecords(t *testing.T) {
	t.Parallel()
	o := genericOffloader(t)
	n := 1 << 20 // 27 MB of records before
	if testenv.Full() {
		n = 9 << 20 // 9 MB of newlines made a 242 MB file
	}
	blank := strings.Repeat("\n", n)
	d, _ := descriptorIn(t, serve(t, o, "dump", nil, host.Result{Content: []host.Content{host.TextContent(blank + "last\n")}}), 0)
	assert.Equal(t, 1, d.Summary.Count)
	info, err := os.Stat(d.FilePath)
	require.NoError(t, err)
	assert.Less(t, info.Size(), int64(1<<10), "a file of one record, not of %d", n)
	_, lines := fileRecords(t, d.FilePath)
	assert.JSONEq(t, fmt.Sprintf(`{"line":%d,"text":"last"}`, n+1), string(lines[0]))

	// A fallback keeps the paragraphs as they were.
	para := strings.Repeat(strings.Repeat("word ", 30)+"\n\n", 200)
	mem := lrotest.NewMemFS("/lro")
	mem.FailCreate(syscall.EACCES)
	o = genericOffloader(t, lro.WithFS(mem))
	res := serve(t, o, "dump", nil, host.Result{Content: []host.Content{host.TextContent(para)}})
	require.NotEmpty(t, res.Content)
	kept := res.Content[0].Text
	assert.True(t, strings.HasPrefix(para, kept), "the fallback is the text's beginning, blank lines and all: %.200q", kept)
	assert.Contains(t, kept, "\n\n")
}

// TestGuidanceNamesAHugeRecord: a set with a record larger than the
// threshold says so, since a recipe that prints records whole prints it
// (cut at 32 KiB), and asks for fields; ordinary records get no such
// sentence.
func TestGuidanceNamesAHugeRecord(t *testing.T) {
	o := genericOffloader(t)
	recs := tickets(300)
	recs[7] = map[string]any{"id": "T-huge", "body": strings.Repeat("lorem ipsum ", 120_000)} // 1.4 MB
	d, _ := descriptorIn(t, serve(t, o, "tickets", nil, host.Result{Content: []host.Content{host.TextContent(mustJSON(t, recs))}}), 0)
	assert.Contains(t, d.Guidance, "Its largest record is 1.4 MB: select the fields you need")

	d, _ = descriptorIn(t, serve(t, o, "tickets", nil, host.Result{Content: []host.Content{host.TextContent(mustJSON(t, tickets(300)))}}), 0)
	assert.NotContains(t, d.Guidance, "largest record")
}
