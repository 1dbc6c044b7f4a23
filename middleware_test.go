package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/mcplro/lro/internal/testmcp"
	"github.com/mcplro/lro/lrotest"
	"github.com/mcplro/lro/mcpgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shared helpers of the module's tests (internal/testmcp).
var (
	connect  = testmcp.Connect
	callTool = testmcp.CallTool
	textOf   = testmcp.TextOf
)

var testStore = memstore.New(memstore.Generate(500, 7))

// descriptor returns the descriptor of an offloaded result, checking that
// it is the only text and that any item after it is the resource link to
// its file (a server with ServerOption serves them).
func descriptor(t *testing.T, res *mcp.CallToolResult) lro.OffloadResponse {
	t.Helper()
	require.False(t, res.IsError, textOf(t, res, 0))
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(textOf(t, res, 0)), &d), textOf(t, res, 0)[:min(200, len(textOf(t, res, 0)))])
	require.True(t, d.Offloaded)
	files := []string{d.FilePath}
	for _, s := range d.Sections {
		files = append(files, s.FilePath)
	}
	require.LessOrEqual(t, len(res.Content), 1+len(files))
	for i, c := range res.Content[1:] {
		link, ok := c.(mcp.ResourceLink)
		require.True(t, ok, "after the descriptor only the resource links to its files, got %T", c)
		assert.Equal(t, "lro://files/"+filepath.Base(files[i]), link.URI)
	}
	return d
}

func isDescriptor(t *testing.T, res *mcp.CallToolResult) bool {
	var d map[string]any
	return len(res.Content) > 0 && json.Unmarshal([]byte(textOf(t, res, 0)), &d) == nil && d["offloaded"] == true
}

func memServer(t *testing.T, mutate func(*lro.Config), opts ...lro.Option) (*server.MCPServer, *lro.Offloader) {
	o := newOffloader(t, mutate, opts...)
	return memserver.New(testStore, o), o
}

func TestRecallInlineBelowThreshold(t *testing.T) {
	s, _ := memServer(t, nil)
	plain := connect(t, memserver.New(testStore, nil))
	c := connect(t, s)
	args := map[string]any{"query": "caching", "limit": 3}
	res := callTool(t, c, "recall_memories", args)
	assert.False(t, isDescriptor(t, res))
	assert.Equal(t, textOf(t, callTool(t, plain, "recall_memories", args), 0), textOf(t, res, 0), "untouched")
}

func TestRecallOffloadedAtEachDetail(t *testing.T) {
	s, _ := memServer(t, nil)
	c := connect(t, s)
	keys := map[string][]string{
		"light":  {"created", "id", "memory_type", "modified", "namespace", "status", "tags", "title"},
		"medium": {"confidence", "content", "created", "id", "memory_type", "modified", "namespace", "status", "summary", "tags", "title"},
	}
	for _, detail := range []string{"light", "medium", "full", ""} {
		t.Run("detail="+detail, func(t *testing.T) {
			args := map[string]any{"query": "database failover", "limit": 200}
			if detail != "" {
				args["detail"] = detail
			}
			res := callTool(t, c, "recall_memories", args)
			d := descriptor(t, res)
			want := detail
			if want == "" {
				want = "light" // recall_memories' default
			}
			assert.Equal(t, lro.Detail(want), d.Summary.Detail)
			assert.Equal(t, "recall", d.Summary.Operation)
			assert.Equal(t, 200, d.Summary.Count)
			require.NotNil(t, d.Summary.ScoreRange, "scores of the hits")
			assert.Equal(t, 1.0, d.Summary.ScoreRange[1])
			assert.NotContains(t, d.Summary.Extra, "query", "the header keeps the query")
			assert.NotNil(t, res.StructuredContent, "structured content is replaced too")
			b, _ := json.Marshal(res.StructuredContent)
			assert.Contains(t, string(b), `"offloaded":true`)

			h, lines := readJSONL(t, readFile(t, d.FilePath))
			assert.Equal(t, "database failover", *h.Query)
			require.Len(t, lines, 200)
			hits := testStore.Recall("database failover", "", 200)
			for i, l := range lines {
				var m map[string]any
				require.NoError(t, json.Unmarshal(l, &m))
				assert.Equal(t, hits[i].Memory.ID, m["id"], "line %d is the memory of hit %d, in order", i, i)
				assert.NotContains(t, m, "score", "scores never go into the file")
				if k, ok := keys[want]; ok {
					assert.ElementsMatch(t, k, mapKeys(m))
				} else {
					assert.Contains(t, m, "provenance")
				}
			}
		})
	}
}

func mapKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestInvalidDetailIsToolError: a detail that is not one of lro's levels,
// given to a tool whose input schema declares no detail of its own, is a
// tool error. (The example server declares detail: its own refusal is
// checked in TestConformance.)
func TestInvalidDetailIsToolError(t *testing.T) {
	s := server.NewMCPServer("memory", "1.0.0", mcpgo.ServerOption(newOffloader(t, nil)))
	s.AddTool(mcp.NewTool("recall_memories", mcp.WithString("query"), mcp.WithNumber("limit")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("[]"), nil
		})
	c := connect(t, s)
	for _, bad := range []any{"huge", 3, ""} {
		res := callTool(t, c, "recall_memories", map[string]any{"query": "x", "limit": 200, "detail": bad})
		assert.True(t, res.IsError, "%v", bad)
		assert.Contains(t, textOf(t, res, 0), "invalid detail")
	}
	res := callTool(t, c, "recall_memories", map[string]any{"query": "x", "limit": 1})
	assert.False(t, res.IsError, "the server keeps answering")

	// Issue 22: an invalid detail of 100 KB came back whole. What the
	// error repeats of it is capped, as lro_extract's errors are.
	for _, bad := range []any{strings.Repeat("d", 100<<10), map[string]any{"k": strings.Repeat("e", 100<<10)}} {
		res := callTool(t, c, "recall_memories", map[string]any{"query": "x", "limit": 200, "detail": bad})
		require.True(t, res.IsError)
		text := textOf(t, res, 0)
		assert.Contains(t, text, "invalid detail")
		assert.Less(t, len(text), 400, "the echo is capped")
		assert.Contains(t, text, "bytes)")
	}
	_, err := lro.ParseDetail(strings.Repeat("d", 100<<10))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 400)
	assert.Contains(t, err.Error(), `invalid detail "ddd`)
}

func TestInjectContextJudgedBeforeBudget(t *testing.T) {
	s, _ := memServer(t, nil)
	c := connect(t, s)
	// 100 medium memories are far over the threshold, though the budget
	// would trim the formatted context to 300 tokens.
	res := callTool(t, c, "inject_context", map[string]any{"query": "deployment", "limit": 100, "token_budget": 300})
	d := descriptor(t, res)
	assert.Equal(t, "inject", d.Summary.Operation)
	assert.Equal(t, lro.DetailMedium, d.Summary.Detail, "inject_context defaults to medium")
	assert.Equal(t, 100, d.Summary.Count, "the whole pre-budget set is in the file")
	require.NotNil(t, d.Summary.ScoreRange)

	res = callTool(t, c, "inject_context", map[string]any{"query": "deployment", "limit": 3, "token_budget": 300})
	text := textOf(t, res, 0)
	assert.False(t, isDescriptor(t, res))
	assert.True(t, strings.HasPrefix(text, "## "), "a small set returns the formatted context: %.80s", text)
}

func TestPaginatedListOffloadedWithoutCursor(t *testing.T) {
	s, _ := memServer(t, nil)
	c := connect(t, s)
	res := callTool(t, c, "list_memories", map[string]any{"limit": 10})
	d := descriptor(t, res)
	assert.Equal(t, "list", d.Summary.Operation)
	assert.Equal(t, 500, d.Summary.Count, "the whole set, not the first page")
	assert.NotContains(t, textOf(t, res, 0), "next_cursor", "an offloaded set has no cursor")

	// Under the threshold (a narrow namespace), pagination works as usual.
	ns := testStore.Recall("", "", 1)[0].Memory.Namespace
	_, total := testStore.List(ns, 0, 0)
	s2, _ := memServer(t, func(c *lro.Config) { c.ThresholdTokens = 100000 })
	c2 := connect(t, s2)
	var page struct {
		Total      int               `json:"total"`
		Memories   []json.RawMessage `json:"memories"`
		NextCursor string            `json:"next_cursor"`
	}
	require.NoError(t, json.Unmarshal([]byte(textOf(t, callTool(t, c2, "list_memories", map[string]any{"namespace": ns, "limit": 5}), 0)), &page))
	assert.Equal(t, total, page.Total)
	assert.Len(t, page.Memories, 5)
	assert.Equal(t, "5", page.NextCursor)
}

// auditLog is a tool with no memory semantics: rows of a generic table.
func auditLog(n int) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rows := make([]map[string]any, n)
		for i := range rows {
			rows[i] = map[string]any{
				"id":     fmt.Sprintf("evt-%05d", i),
				"actor":  []string{"alice", "bob", "carol"}[i%3],
				"action": []string{"login", "read", "write", "delete"}[i%4],
				"bytes":  i * 37 % 1000,
				"detail": fmt.Sprintf("request %d touched object %d in bucket %d", i, i*7, i%11),
			}
		}
		return mcp.NewToolResultJSON(rows)
	}
}

func bigText(lines int) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var b strings.Builder
		for i := 1; i <= lines; i++ {
			fmt.Fprintf(&b, "2026-11-22T06:%02d:%02dZ worker-%d processed batch %d\n", i/60%60, i%60, i%4, i)
		}
		return mcp.NewToolResultText(b.String()), nil
	}
}

func genericServer(t *testing.T, opts ...lro.Option) (*server.MCPServer, *lro.Offloader) {
	o := newOffloader(t, nil, append([]lro.Option{lro.WithAnyTool(lro.ToolPolicy{Generic: true})}, opts...)...)
	s := server.NewMCPServer("generic", "1", mcpgo.ServerOption(o))
	s.AddTool(mcp.NewTool("audit_log"), auditLog(600))
	s.AddTool(mcp.NewTool("tail_log"), bigText(3000))
	s.AddTool(mcp.NewTool("small"), auditLog(2))
	s.AddTool(mcp.NewTool("failing"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError(strings.Repeat("boom ", 5000)), nil
	})
	type table struct {
		Rows []map[string]any `json:"rows"`
	}
	withSchema := mcp.NewTool("typed", mcp.WithOutputSchema[table]())
	s.AddTool(withSchema, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, _ := auditLog(600)(ctx, req)
		return mcp.NewToolResultJSON(table{Rows: res.StructuredContent.([]map[string]any)})
	})
	return s, o
}

func TestGenericJSONToolOffloaded(t *testing.T) {
	t.Parallel()
	s, _ := genericServer(t)
	c := connect(t, s)
	d := descriptor(t, callTool(t, c, "audit_log", nil))
	assert.Equal(t, "audit_log", d.Summary.Operation)
	assert.Equal(t, 600, d.Summary.Count)
	assert.Empty(t, d.Summary.TopNamespaces)
	assert.JSONEq(t, `{"type":"object","properties":{"action":{"type":"string"},"actor":{"type":"string"},"bytes":{"type":"integer"},"detail":{"type":"string"},"id":{"type":"string"}},"required":["action","actor","bytes","detail","id"]}`, string(d.LineSchema))
	require.NotEmpty(t, d.JQRecipes)
	assert.LessOrEqual(t, len(d.JQRecipes), 10)
	for _, r := range d.JQRecipes {
		out := runShell(t, r.Command, strings.Contains(r.Command, "jq -r"))
		if r.Description == "Count the records" {
			assert.Equal(t, []any{600.0}, out.values)
		}
		if r.Description == "Count by actor" {
			assert.Equal(t, []any{[]any{
				map[string]any{"actor": "alice", "count": 200.0},
				map[string]any{"actor": "bob", "count": 200.0},
				map[string]any{"actor": "carol", "count": 200.0},
			}}, out.values)
		}
	}
	assert.Contains(t, d.Guidance, "600 records")
}

func TestLargeTextToolOffloadedAsLines(t *testing.T) {
	s, _ := genericServer(t)
	c := connect(t, s)
	d := descriptor(t, callTool(t, c, "tail_log", nil))
	assert.Equal(t, 3000, d.Summary.Count)
	_, lines := readJSONL(t, readFile(t, d.FilePath))
	require.Len(t, lines, 3000)
	assert.JSONEq(t, `{"line":42,"text":"2026-11-22T06:00:42Z worker-2 processed batch 42"}`, string(lines[41]))
	var grep string
	for _, r := range d.JQRecipes {
		if strings.HasPrefix(r.Description, "Search lines") {
			grep = regexp.MustCompile(`test\("[^"]*"`).ReplaceAllLiteralString(r.Command, `test("batch 2999$"`)
		}
	}
	require.NotEmpty(t, grep)
	assert.Equal(t, []string{"2999: 2026-11-22T06:49:59Z worker-3 processed batch 2999"}, runShell(t, grep, true).lines)
}

func TestPassThrough(t *testing.T) {
	s, _ := genericServer(t)
	c := connect(t, s)
	res := callTool(t, c, "failing", nil)
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(t, res, 0), "boom boom", "errors pass untouched, however large")

	res = callTool(t, c, "small", nil)
	assert.False(t, isDescriptor(t, res))

	// Without WithAnyTool, an unconfigured tool passes through.
	o := newOffloader(t, nil)
	plain := server.NewMCPServer("plain", "1", mcpgo.ServerOption(o))
	plain.AddTool(mcp.NewTool("audit_log"), auditLog(600))
	assert.False(t, isDescriptor(t, callTool(t, connect(t, plain), "audit_log", nil)))

	// Disabled: nothing is offloaded.
	off, _ := memServer(t, func(c *lro.Config) { c.Enabled = lro.Bool(false) })
	assert.False(t, isDescriptor(t, callTool(t, connect(t, off), "recall_memories", map[string]any{"query": "x", "limit": 300})))
}

func TestOutputSchemaOptOut(t *testing.T) {
	s, _ := genericServer(t, lro.WithTool("typed", lro.ToolPolicy{Generic: true, SkipOutputSchema: true}))
	assert.False(t, isDescriptor(t, callTool(t, connect(t, s), "typed", nil)))
}

func TestWriteFailureFallsBackThroughMiddleware(t *testing.T) {
	mem := lrotest.NewMemFS("/lro")
	mem.FailCreate(syscall.EACCES)
	var rec recorder
	s, o := memServer(t, nil, lro.WithFS(mem), lro.WithHooks(rec.hooks()))
	c := connect(t, s)
	res := callTool(t, c, "recall_memories", map[string]any{"query": "security", "limit": 200, "detail": "medium"})
	require.False(t, res.IsError, "the call still succeeds")
	require.Len(t, res.Content, 2)
	var body struct {
		Query   string `json:"query"`
		Results []struct {
			Score  float64         `json:"score"`
			Memory json.RawMessage `json:"memory"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(textOf(t, res, 0)), &body), "the truncated result keeps its shape")
	assert.Equal(t, "security", body.Query)
	require.NotEmpty(t, body.Results)
	assert.Less(t, len(body.Results), 200)
	assert.LessOrEqual(t, o.EstimateTokens([]byte(textOf(t, res, 0))), 1600, "the whole inline result fits the threshold, hit wrappers and other fields included")
	assert.Contains(t, textOf(t, res, 1), "offloading failed")
	assert.Contains(t, textOf(t, res, 1), "permission denied")
	require.Len(t, rec.Failed(), 1)
	assert.Equal(t, len(body.Results), rec.Failed()[0].Kept)
	assert.Empty(t, mem.Names())
}

func TestProxyClientGetsFullResults(t *testing.T) {
	s, _ := memServer(t, nil)
	args := map[string]any{"query": "caching", "limit": 200}

	byCapability := connect(t, s, client.WithClientCapabilities(mcp.ClientCapabilities{
		Experimental: map[string]any{host.ProxyCapability: map[string]any{}},
	}))
	res := callTool(t, byCapability, "recall_memories", args)
	assert.False(t, isDescriptor(t, res), "a proxy offloads on its own side")
	assert.Contains(t, textOf(t, res, 0), `"count":200`)

	normal := connect(t, s)
	assert.True(t, isDescriptor(t, callTool(t, normal, "recall_memories", args)), "other clients of the same server still get offloading")
}

func TestMiddlewareLeavesNoFilesWhenInline(t *testing.T) {
	s, o := memServer(t, nil)
	c := connect(t, s)
	callTool(t, c, "recall_memories", map[string]any{"query": "x", "limit": 2})
	entries, err := os.ReadDir(o.Config().OutputDir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestCollectAfterClose: a handler that trusts Collect must not lose its
// records when the offloader is closed under it.
func TestCollectAfterClose(t *testing.T) {
	o, err := lro.New(lro.DefaultConfig(), lro.WithFS(lrotest.NewMemFS("/lro")))
	require.NoError(t, err)
	srv := memserver.New(testStore, o)
	c := connect(t, srv)
	require.NoError(t, o.Close())
	res := callTool(t, c, "list_memories", map[string]any{"limit": 10})
	assert.False(t, isDescriptor(t, res))
	var page struct {
		Memories   []json.RawMessage `json:"memories"`
		NextCursor string            `json:"next_cursor"`
	}
	require.NoError(t, json.Unmarshal([]byte(textOf(t, res, 0)), &page), "the handler's own page goes out")
	assert.Len(t, page.Memories, 10)
	assert.Equal(t, "10", page.NextCursor)
}
