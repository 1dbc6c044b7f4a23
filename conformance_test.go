package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcplro/lro/mcpgo"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/lrotest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The conformance suite: one table of behaviours, run on both hosts (an
// mcp-go server and an official Go SDK server, each the example memory
// server plus a generic JSON tool and a text tool) through both Go clients
// over streamable HTTP. The TypeScript SDK client runs a subset in
// conformance_ts_test.go.

// confHost serves the test server on one SDK, with off (nil: without
// offloading) and, when extract, lro_extract; it returns the endpoint URL.
type confHost struct {
	name  string
	serve func(t *testing.T, off *lro.Offloader, extract bool) string
}

var confHosts = []confHost{
	{"mcp-go", func(t *testing.T, off *lro.Offloader, extract bool) string {
		s := memserver.New(testStore, off)
		for _, g := range genericTools {
			s.AddTool(mcpgomcp.NewTool(g.name), func(context.Context, mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
				return mcpgomcp.NewToolResultText(g.text), nil
			})
		}
		if extract && off != nil {
			mcpgo.AddExtractTool(s, off)
		}
		return serveHTTP(t, server.NewStreamableHTTPServer(s))
	}},
	{"official", func(t *testing.T, off *lro.Offloader, extract bool) string {
		return serveHTTP(t, mcp.NewStreamableHTTPHandler(officialServer(off, extract), nil))
	}},
	// The SDK's transport serves protocol 2026-07-28 only when stateless,
	// and then keeps nothing of an older client's initialize: this host is
	// run with the go-sdk client, which speaks 2026-07-28 to it.
	{"official-stateless", func(t *testing.T, off *lro.Offloader, extract bool) string {
		return serveHTTP(t, mcp.NewStreamableHTTPHandler(officialServer(off, extract), &mcp.StreamableHTTPOptions{Stateless: true}))
	}},
}

func officialServer(off *lro.Offloader, extract bool) func(*http.Request) *mcp.Server {
	s := memserver.NewOfficial(testStore, off)
	for _, g := range genericTools {
		s.AddTool(&mcp.Tool{Name: g.name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: g.text}}}, nil
		})
	}
	if extract && off != nil {
		gosdk.AddExtractTool(s, off)
	}
	return func(*http.Request) *mcp.Server { return s }
}

func serveHTTP(t *testing.T, h http.Handler) string {
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// genericTools are ordinary tools, not written for lro: a JSON array of
// tickets and a log of text lines.
var genericTools = []struct{ name, text string }{
	{"tickets", func() string {
		tickets := make([]map[string]any, 300)
		for i := range tickets {
			tickets[i] = map[string]any{"id": i + 1, "title": fmt.Sprintf("Ticket %d: the cache is cold", i+1), "status": []string{"open", "closed"}[i%2], "priority": i % 4}
		}
		b, _ := json.Marshal(tickets)
		return string(b)
	}()},
	{"logs", func() string {
		var b strings.Builder
		for i := range 2000 {
			fmt.Fprintf(&b, "2026-11-23T10:%02d:%02dZ level=info msg=\"request served\" id=%d\n", i/60%60, i%60, i)
		}
		return b.String()
	}()},
}

var genericPolicies = []lro.Option{lro.WithTool("tickets", lro.ToolPolicy{Generic: true}), lro.WithTool("logs", lro.ToolPolicy{Generic: true})}

// confResult is a tool result as any client saw it.
type confResult struct {
	IsError    bool
	Texts      []string
	Links      []confLink // resource links, after the texts
	Structured json.RawMessage
}

// confLink is a resource_link item as a client saw it.
type confLink struct {
	URI, Name, MIMEType string
	Size                int64
}

type callFunc func(tool string, args map[string]any) confResult

// confClient connects one Go client to url; a proxy that is not nil is the
// host.ProxyCapability object the client announces itself with, as an LRO
// proxy.
type confClient struct {
	name    string
	connect func(t *testing.T, url string, proxy map[string]any) callFunc
	// connectAs connects as a client of the given name.
	connectAs func(t *testing.T, url, name string, proxy map[string]any) callFunc
}

func init() {
	for i := range confClients {
		as := confClients[i].connectAs
		confClients[i].connect = func(t *testing.T, url string, proxy map[string]any) callFunc { return as(t, url, "conformance", proxy) }
	}
}

var confClients = []confClient{
	{name: "go-sdk client", connectAs: func(t *testing.T, url, name string, proxy map[string]any) callFunc {
		opts := &mcp.ClientOptions{}
		if proxy != nil {
			opts.Capabilities = &mcp.ClientCapabilities{Experimental: map[string]any{host.ProxyCapability: proxy}}
		}
		c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		return func(tool string, args map[string]any) confResult {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			require.NoError(t, err)
			r := confResult{IsError: res.IsError}
			for _, c := range res.Content {
				switch c := c.(type) {
				case *mcp.TextContent:
					r.Texts = append(r.Texts, c.Text)
				case *mcp.ResourceLink:
					r.Links = append(r.Links, confLink{c.URI, c.Name, c.MIMEType, *c.Size})
				default:
					t.Fatalf("unexpected content %T", c)
				}
			}
			if res.StructuredContent != nil {
				r.Structured, err = json.Marshal(res.StructuredContent)
				require.NoError(t, err)
			}
			return r
		}
	}},
	{name: "mcp-go client", connectAs: func(t *testing.T, url, name string, proxy map[string]any) callFunc {
		c, err := mcpclient.NewStreamableHttpClient(url)
		require.NoError(t, err)
		require.NoError(t, c.Start(context.Background()))
		t.Cleanup(func() { c.Close() })
		init := mcpgomcp.InitializeRequest{}
		init.Params.ClientInfo = mcpgomcp.Implementation{Name: name, Version: "1"}
		// The session protocol: the go-sdk client covers 2026-07-28.
		init.Params.ProtocolVersion = mcpgomcp.ProtocolVersion20251125
		if proxy != nil {
			init.Params.Capabilities.Experimental = map[string]any{host.ProxyCapability: proxy}
		}
		_, err = c.Initialize(context.Background(), init)
		require.NoError(t, err)
		return func(tool string, args map[string]any) confResult {
			req := mcpgomcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = tool, args
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := c.CallTool(ctx, req)
			require.NoError(t, err)
			r := confResult{IsError: res.IsError}
			for _, c := range res.Content {
				switch c := c.(type) {
				case mcpgomcp.TextContent:
					r.Texts = append(r.Texts, c.Text)
				case mcpgomcp.ResourceLink:
					r.Links = append(r.Links, confLink{c.URI, c.Name, c.MIMEType, *c.Size})
				default:
					t.Fatalf("unexpected content %T", c)
				}
			}
			if res.StructuredContent != nil {
				r.Structured, err = json.Marshal(res.StructuredContent)
				require.NoError(t, err)
			}
			return r
		}
	}},
}

// confEnv is what a case's check may use besides the result.
type confEnv struct {
	off   *lro.Offloader
	call  callFunc // the same client and server
	plain callFunc // the same client, a server without offloading
	tool  string   // the case's call
	args  map[string]any
}

type confCase struct {
	name    string
	tool    string
	args    map[string]any
	config  func(*lro.Config)
	options func() []lro.Option // besides genericPolicies
	proxy   map[string]any      // the client's host.ProxyCapability, if any
	extract bool
	check   func(t *testing.T, env confEnv, r confResult)
}

var confCases = []confCase{
	{name: "recall under the threshold is inline", tool: "recall_memories", args: map[string]any{"query": "cache", "limit": 3},
		check: samePlain},
	{name: "recall light", tool: "recall_memories", args: map[string]any{"query": "cache", "limit": 200},
		check: offloaded("recall", lro.DetailLight, 200, true)},
	{name: "recall medium", tool: "recall_memories", args: map[string]any{"query": "cache", "limit": 200, "detail": "medium"},
		check: offloaded("recall", lro.DetailMedium, 200, true)},
	{name: "recall full", tool: "recall_memories", args: map[string]any{"query": "cache", "limit": 200, "detail": "full"},
		check: offloaded("recall", lro.DetailFull, 200, true)},
	{name: "inject judges the pre-budget set", tool: "inject_context", args: map[string]any{"query": "cache", "limit": 200, "token_budget": 300},
		check: offloaded("inject", lro.DetailMedium, 200, false)},
	{name: "inject under the threshold is the formatted text", tool: "inject_context", args: map[string]any{"query": "cache", "limit": 3},
		check: samePlain},
	{name: "list offloads the whole set without a cursor", tool: "list_memories", args: map[string]any{"limit": 10},
		check: offloaded("list", lro.DetailLight, 500, false)},
	{name: "a later page stays inline with its cursor", tool: "list_memories", args: map[string]any{"limit": 5, "cursor": "10"},
		check: func(t *testing.T, env confEnv, r confResult) {
			samePlain(t, env, r)
			assert.Contains(t, r.Texts[0], `"next_cursor":"15"`)
		}},
	{name: "generic JSON", tool: "tickets",
		check: func(t *testing.T, env confEnv, r confResult) {
			d := checkOffloaded(t, env, r, "tickets", "", 300, false)
			assert.Contains(t, string(d.LineSchema), "priority", "the line schema is inferred from the records")
		}},
	{name: "plain text", tool: "logs",
		check: func(t *testing.T, env confEnv, r confResult) {
			d := checkOffloaded(t, env, r, "logs", "", 2000, false)
			_, lines := readJSONL(t, mustRead(t, d.FilePath))
			assert.JSONEq(t, `{"line":2,"text":"2026-11-23T10:00:01Z level=info msg=\"request served\" id=1"}`, string(lines[1]))
		}},
	{name: "invalid detail is a tool error naming it", tool: "recall_memories", args: map[string]any{"query": "cache", "detail": "huge"},
		check: func(t *testing.T, env confEnv, r confResult) {
			require.True(t, r.IsError)
			assert.Contains(t, r.Texts[0], `invalid detail "huge"`)
		}},
	{name: "a tool error passes through", tool: "recall_memories", args: map[string]any{"limit": 3},
		check: func(t *testing.T, env confEnv, r confResult) {
			require.True(t, r.IsError)
			samePlain(t, env, r)
		}},
	{name: "disabled", tool: "recall_memories", args: map[string]any{"query": "cache", "limit": 200},
		config: func(c *lro.Config) { c.Enabled = lro.Bool(false) }, check: samePlain},
	{name: "a failed write falls back to a truncated result", tool: "recall_memories", args: map[string]any{"query": "cache", "limit": 200},
		options: func() []lro.Option {
			fs := lrotest.NewMemFS("/offload")
			fs.FailCreate(syscall.ENOSPC)
			return []lro.Option{lro.WithFS(fs)}
		},
		check: func(t *testing.T, env confEnv, r confResult) {
			require.False(t, r.IsError)
			require.Len(t, r.Texts, 2)
			assert.Contains(t, r.Texts[1], "offloading failed")
			var kept struct{ Results []json.RawMessage }
			require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &kept))
			assert.NotEmpty(t, kept.Results)
			assert.Less(t, len(kept.Results), 200)
			assert.LessOrEqual(t, env.off.EstimateTokens([]byte(r.Texts[0])), env.off.Config().ThresholdTokens)
		}},
	{name: "a proxy client gets the full result", tool: "recall_memories", args: map[string]any{"query": "cache", "limit": 200}, proxy: map[string]any{},
		check: samePlain},
	{name: "a restoring proxy gets the JSON once", tool: "recall_memories", args: map[string]any{"query": "cache", "limit": 3}, proxy: restoringProxy,
		check: sentOnce},
	{name: "lro_extract", tool: "recall_memories", args: map[string]any{"query": "cache", "limit": 200, "detail": "full"}, extract: true,
		check: func(t *testing.T, env confEnv, r confResult) {
			d := checkOffloaded(t, env, r, "recall", lro.DetailFull, 200, true)
			assert.Contains(t, d.Guidance, "lro_extract(", "native guidance where the server has lro_extract")
			checkExtract(t, env.call, d)
		}},
}

func TestConformance(t *testing.T) {
	for _, h := range confHosts {
		for _, c := range confClients {
			if h.name == "official-stateless" && c.name != "go-sdk client" {
				continue // see confHosts
			}
			t.Run(h.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				plain := c.connect(t, h.serve(t, nil, false), nil)
				for _, tc := range confCases {
					t.Run(tc.name, func(t *testing.T) {
						opts := genericPolicies
						if tc.options != nil {
							opts = append(tc.options(), opts...)
						}
						off := newOffloader(t, tc.config, opts...)
						call := c.connect(t, h.serve(t, off, tc.extract), tc.proxy)
						tc.check(t, confEnv{off: off, call: call, plain: plain, tool: tc.tool, args: tc.args}, call(tc.tool, tc.args))
					})
				}
			})
		}
	}
}

// TestConformanceSameDescriptor checks that both hosts describe the same
// call with the same descriptor, but for the file's name.
func TestConformanceSameDescriptor(t *testing.T) {
	args := map[string]any{"query": "cache", "limit": 200, "detail": "medium"}
	var got []string
	for _, h := range confHosts[:2] {
		off := newOffloader(t, nil)
		r := confClients[0].connect(t, h.serve(t, off, false), nil)("recall_memories", args)
		d := checkOffloaded(t, confEnv{off: off}, r, "recall", lro.DetailMedium, 200, true)
		got = append(got, strings.ReplaceAll(r.Texts[0], d.FilePath, "{file}"))
	}
	assert.Equal(t, got[0], got[1])
}

// samePlain checks that the result is what the server gives without
// offloading.
func samePlain(t *testing.T, env confEnv, r confResult) {
	t.Helper()
	assert.False(t, isDescriptorText(r.Texts), "not offloaded")
	assert.Equal(t, env.plain(env.tool, env.args), r)
}

// restoringProxy is the capability of a proxy that puts back structured
// content its one text item repeats, as proxy.Proxy does.
var restoringProxy = map[string]any{"structuredFromText": true}

// sentOnce checks that the result is what the server gives without
// offloading less its structured content, which its text repeats byte for
// byte.
func sentOnce(t *testing.T, env confEnv, r confResult) {
	t.Helper()
	plain := env.plain(env.tool, env.args)
	require.NotNil(t, plain.Structured, "the tool has structured content")
	require.Len(t, plain.Texts, 1)
	assert.Nil(t, r.Structured, "left out: the text holds it")
	assert.Equal(t, plain.Texts, r.Texts)
	assert.JSONEq(t, string(plain.Structured), r.Texts[0])
}

func isDescriptorText(texts []string) bool {
	var d struct{ Offloaded bool }
	return len(texts) > 0 && json.Unmarshal([]byte(texts[0]), &d) == nil && d.Offloaded
}

// offloaded returns a check that the result is the descriptor of a file
// of count records (see checkOffloaded).
func offloaded(op string, detail lro.Detail, count int, structured bool) func(*testing.T, confEnv, confResult) {
	return func(t *testing.T, env confEnv, r confResult) {
		t.Helper()
		checkOffloaded(t, env, r, op, detail, count, structured)
	}
}

// checkOffloaded checks that the result is the descriptor of a file of
// count records, whose structured content (when structured) is the same
// descriptor, and returns it.
func checkOffloaded(t *testing.T, env confEnv, r confResult, op string, detail lro.Detail, count int, structured bool) lro.OffloadResponse {
	t.Helper()
	require.False(t, r.IsError, "%v", r.Texts)
	require.Len(t, r.Texts, 1)
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &d), "%.300s", r.Texts[0])
	require.True(t, d.Offloaded)
	assert.Equal(t, op, d.Summary.Operation)
	assert.Equal(t, detail, d.Summary.Detail, "generic records (detail \"\") have no detail level")
	assert.Equal(t, count, d.Summary.Count)
	assert.Greater(t, d.Summary.EstimatedTokens, env.off.Config().ThresholdTokens)
	assert.NotEmpty(t, d.JQRecipes)
	assert.Equal(t, env.off.Config().OutputDir, filepath.Dir(d.FilePath))
	h, lines := readJSONL(t, mustRead(t, d.FilePath))
	assert.Equal(t, count, h.Count)
	assert.Len(t, lines, count)
	if structured {
		assert.JSONEq(t, r.Texts[0], string(r.Structured), "structured content carries the descriptor too")
	} else {
		assert.Nil(t, r.Structured)
	}
	return d
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// checkExtract runs lro_extract on an offloaded file: recipes with and
// without parameters, a custom query, and the refusals.
func checkExtract(t *testing.T, call callFunc, d lro.OffloadResponse) {
	t.Helper()
	_, lines := readJSONL(t, mustRead(t, d.FilePath))
	var first struct{ ID, Namespace string }
	require.NoError(t, json.Unmarshal(lines[0], &first))

	r := call(lro.ExtractToolName, map[string]any{"file_path": d.FilePath, "recipe": 4})
	require.False(t, r.IsError, r.Texts)
	assert.Contains(t, r.Texts[0], first.ID, "recipe 4 lists ids")

	r = call(lro.ExtractToolName, map[string]any{"file_path": d.FilePath, "recipe": 2, "params": map[string]any{"namespace": first.Namespace}})
	require.False(t, r.IsError, r.Texts)
	assert.Contains(t, r.Texts[0], first.ID)

	r = call(lro.ExtractToolName, map[string]any{"file_path": d.FilePath, "query": "select(.id == $id) | .namespace", "params": map[string]any{"id": first.ID}})
	require.False(t, r.IsError, r.Texts)
	assert.Equal(t, fmt.Sprintf("%q\n", first.Namespace), r.Texts[0])

	for args, want := range map[string]map[string]any{
		"not in the offload directory": {"file_path": "/etc/passwd", "recipe": 1},
		"from 1 to 10":                 {"file_path": d.FilePath, "recipe": 11},
		"exactly one of recipe":        {"file_path": d.FilePath},
		"invalid query":                {"file_path": d.FilePath, "query": "select("},
	} {
		r := call(lro.ExtractToolName, want)
		require.True(t, r.IsError, "%v: %v", want, r.Texts)
		assert.Contains(t, r.Texts[0], args)
	}
}
