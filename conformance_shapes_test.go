package lro_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/mcpgo"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/internal/e2e"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shapes a tool result takes, each served by both hosts with the same
// content, and what each must become.

var pixel = []byte("\x89PNG\r\n\x1a\n-not-really-an-image-")

// shapeItem is one content item, host-neutral: text, an embedded text
// resource (uri set), or an image (image set).
type shapeItem struct {
	text, uri string
	image     []byte
}

type shapeTool struct {
	name       string
	items      []shapeItem
	structured any
	check      func(t *testing.T, r rawResult)
}

// rawResult is a result as a client decoded it, item types included.
type rawResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Data     string          `json:"data"`
		Resource json.RawMessage `json:"resource"`
		URI      string          `json:"uri"`
		Size     int64           `json:"size"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

// checkShape runs the shape's check on r without its trailing resource
// links, after checking that each links to a file the result's
// descriptor names, with the file's size.
func checkShape(t *testing.T, st shapeTool, r rawResult) {
	t.Helper()
	var files []string
	for len(r.Content) > 0 && r.Content[len(r.Content)-1].Type == "resource_link" {
		link := r.Content[len(r.Content)-1]
		r.Content = r.Content[:len(r.Content)-1]
		name := strings.TrimPrefix(link.URI, "lro://files/")
		files = append(files, name)
		found := strings.Contains(string(r.StructuredContent), "/"+name+`"`)
		for _, c := range r.Content {
			found = found || c.Type == "text" && strings.Contains(c.Text, "/"+name+`"`)
		}
		assert.True(t, found, "the link %s names a file of the descriptor", link.URI)
		assert.Positive(t, link.Size)
	}
	st.check(t, r)
	for _, c := range r.Content {
		if c.Type != "text" || !strings.HasPrefix(c.Text, `{"offloaded":true`) {
			continue
		}
		var d lro.OffloadResponse
		require.NoError(t, json.Unmarshal([]byte(c.Text), &d))
		assert.Len(t, files, 1+len(d.Sections), "one link a file")
	}
}

func (r rawResult) descriptor(t *testing.T, i int) lro.OffloadResponse {
	t.Helper()
	require.False(t, r.IsError)
	require.Greater(t, len(r.Content), i, "%+v", r)
	require.Equal(t, "text", r.Content[i].Type)
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(r.Content[i].Text), &d), "%.200s", r.Content[i].Text)
	require.True(t, d.Offloaded)
	return d
}

func linesOf(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "2026-11-23T10:%02d:%02dZ worker-%d processed batch %d\n", i/60%60, i%60, i%4, i)
	}
	return b.String()
}

var shapeTools = []shapeTool{
	{name: "summary_and_data", items: []shapeItem{{text: "Found 600 tickets."}, {text: jsonOf(tickets(600))}},
		check: func(t *testing.T, r rawResult) {
			require.Len(t, r.Content, 2)
			assert.Equal(t, "Found 600 tickets.", r.Content[0].Text, "the summary stays, in its place")
			checkFiles(t, r.descriptor(t, 1), 600)
		}},
	{name: "embedded_resource", items: []shapeItem{{uri: "file:///exports/tickets.json", text: jsonOf(tickets(400))}},
		check: func(t *testing.T, r rawResult) {
			require.Len(t, r.Content, 1)
			checkFiles(t, r.descriptor(t, 0), 400)
		}},
	{name: "image_and_log", items: []shapeItem{{image: pixel}, {text: linesOf(3000)}},
		check: func(t *testing.T, r rawResult) {
			require.Len(t, r.Content, 2)
			assert.Equal(t, "image", r.Content[0].Type, "an image is kept as it was")
			assert.Equal(t, base64.StdEncoding.EncodeToString(pixel), r.Content[0].Data)
			d := r.descriptor(t, 1)
			assert.Contains(t, d.Guidance, "3000 lines")
			checkFiles(t, d, 3000)
		}},
	{name: "structured_only", structured: map[string]any{"rows": tickets(400), "total": 1234},
		check: func(t *testing.T, r rawResult) {
			require.False(t, r.IsError)
			var d lro.OffloadResponse
			require.NoError(t, json.Unmarshal(r.StructuredContent, &d))
			require.True(t, d.Offloaded)
			assert.Equal(t, "rows", d.Section)
			for _, c := range r.Content {
				assert.NotContains(t, c.Text, `"rows"`, "no record comes back inline")
			}
			checkFiles(t, d, 400)
		}},
	{name: "nested", items: []shapeItem{{text: jsonOf(map[string]any{"data": map[string]any{"items": tickets(500), "total": 900}})}},
		check: func(t *testing.T, r rawResult) {
			d := r.descriptor(t, 0)
			assert.Equal(t, "data.items", d.Section)
			checkFiles(t, d, 500)
		}},
	// mcp-go's filesystem server's tree: a preamble, then the JSON tree,
	// and the same JSON as an embedded resource.
	{name: "fs_tree", items: []shapeItem{{text: "Directory tree for /srv/project:\n" + jsonOf(treeRoots)}, {uri: "file:///srv/project", text: jsonOf(treeRoots)}},
		check: func(t *testing.T, r rawResult) {
			require.Len(t, r.Content, 1, "the repeated document is replaced once")
			d := r.descriptor(t, 0)
			assert.JSONEq(t, `"Directory tree for /srv/project:"`, string(d.Summary.Extra["preamble"]))
			checkFiles(t, d, treeNodes)
			_, lines := fileRecords(t, d.FilePath)
			assert.Contains(t, string(lines[len(lines)-1]), `"path":"dir5/pkg5/file_5_5_5.go"`)
		}},
	// The reference filesystem server's directory_tree: indented JSON.
	{name: "directory_tree", items: []shapeItem{{text: indentedJSON(treeRoots)}},
		check: func(t *testing.T, r rawResult) {
			checkFiles(t, r.descriptor(t, 0), treeNodes)
		}},
	{name: "graph", items: []shapeItem{{text: jsonOf(graph(300, 900))}},
		check: func(t *testing.T, r rawResult) {
			d := r.descriptor(t, 0)
			assert.Equal(t, "edges", d.Section)
			require.Len(t, d.Sections, 1)
			assert.Equal(t, "nodes", d.Sections[0].Section)
			checkFiles(t, d, 1200)
		}},
}

var treeRoots, treeNodes = dirTree(6) // 258 nodes, about 12 KB

func indentedJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// checkFiles checks that the descriptor's files hold total records across
// its sections, each as many as it says, and runs every recipe with jq.
// recipesRun holds the recipes checkFiles ran, their file's path replaced.
var recipesRun sync.Map

func checkFiles(t *testing.T, d lro.OffloadResponse, total int) {
	t.Helper()
	type file struct {
		path    string
		count   int
		recipes []lro.JQRecipe
	}
	files := []file{{d.FilePath, d.Summary.Count, d.JQRecipes}}
	assert.Len(t, d.JQRecipes, lro.RecipeCount)
	for _, s := range d.Sections {
		files = append(files, file{s.FilePath, s.Count, s.JQRecipes})
	}
	sum := 0
	for _, f := range files {
		h, lines := fileRecords(t, f.path)
		assert.Equal(t, f.count, h.Count)
		assert.Len(t, lines, f.count)
		sum += f.count
		for _, r := range f.recipes {
			// Each host and client writes the same recipes for a shape: by
			// default each runs once (bash and jq, twice each, for every
			// recipe of every pair took a minute on a loaded machine).
			if _, ran := recipesRun.LoadOrStore(strings.ReplaceAll(r.Command, f.path, "FILE"), true); ran && !testenv.Full() {
				continue
			}
			out := runShell(t, r.Command, strings.Contains(r.Command, "jq -r"))
			if r.Description == "Count the records" {
				assert.Equal(t, []any{float64(f.count)}, out.values, r.Command)
			}
		}
	}
	assert.Equal(t, total, sum, "every record, across sections")
}

func shapeServerMCPGo(t *testing.T, off *lro.Offloader) string {
	s := server.NewMCPServer("shapes", "1", mcpgo.ServerOption(off))
	for _, st := range shapeTools {
		s.AddTool(mcpgomcp.NewTool(st.name), func(context.Context, mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
			r := &mcpgomcp.CallToolResult{Content: []mcpgomcp.Content{}, StructuredContent: st.structured}
			for _, it := range st.items {
				switch {
				case it.image != nil:
					r.Content = append(r.Content, mcpgomcp.NewImageContent(base64.StdEncoding.EncodeToString(it.image), "image/png"))
				case it.uri != "":
					r.Content = append(r.Content, mcpgomcp.NewEmbeddedResource(mcpgomcp.TextResourceContents{URI: it.uri, MIMEType: "application/json", Text: it.text}))
				default:
					r.Content = append(r.Content, mcpgomcp.NewTextContent(it.text))
				}
			}
			return r, nil
		})
	}
	return serveHTTP(t, server.NewStreamableHTTPServer(s))
}

func shapeServerOfficial(t *testing.T, off *lro.Offloader) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "shapes", Version: "1"}, nil)
	gosdk.Install(s, off)
	for _, st := range shapeTools {
		s.AddTool(&mcp.Tool{Name: st.name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := &mcp.CallToolResult{Content: []mcp.Content{}}
			if st.structured != nil {
				r.StructuredContent = st.structured
			}
			for _, it := range st.items {
				switch {
				case it.image != nil:
					r.Content = append(r.Content, &mcp.ImageContent{Data: it.image, MIMEType: "image/png"})
				case it.uri != "":
					r.Content = append(r.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: it.uri, MIMEType: "application/json", Text: it.text}})
				default:
					r.Content = append(r.Content, &mcp.TextContent{Text: it.text})
				}
			}
			return r, nil
		})
	}
	return serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// rawCallers call a tool through a real client and return its result as
// the client decoded it.
var rawCallers = []struct {
	name    string
	connect func(t *testing.T, url string) func(tool string) rawResult
}{
	{"go-sdk client", func(t *testing.T, url string) func(string) rawResult {
		c := mcp.NewClient(&mcp.Implementation{Name: "shapes", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		return func(tool string) rawResult {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
			require.NoError(t, err)
			return remarshal(t, res)
		}
	}},
	{"mcp-go client", func(t *testing.T, url string) func(string) rawResult {
		c, err := mcpclient.NewStreamableHttpClient(url)
		require.NoError(t, err)
		require.NoError(t, c.Start(context.Background()))
		t.Cleanup(func() { c.Close() })
		init := mcpgomcp.InitializeRequest{}
		init.Params.ClientInfo = mcpgomcp.Implementation{Name: "shapes", Version: "1"}
		init.Params.ProtocolVersion = mcpgomcp.ProtocolVersion20251125
		_, err = c.Initialize(context.Background(), init)
		require.NoError(t, err)
		return func(tool string) rawResult {
			req := mcpgomcp.CallToolRequest{}
			req.Params.Name = tool
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := c.CallTool(ctx, req)
			require.NoError(t, err)
			return remarshal(t, res)
		}
	}},
}

func remarshal(t *testing.T, v any) rawResult {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var r rawResult
	require.NoError(t, json.Unmarshal(b, &r), "%s", b)
	return r
}

var shapeHosts = []struct {
	name  string
	serve func(t *testing.T, off *lro.Offloader) string
}{{"mcp-go", shapeServerMCPGo}, {"official", shapeServerOfficial}}

// TestConformanceShapes runs every shape on both hosts through the Go
// clients of both SDKs.
func TestConformanceShapes(t *testing.T) {
	for _, h := range shapeHosts {
		for _, c := range rawCallers {
			t.Run(h.name+"/"+c.name, func(t *testing.T) {
				if (h.name == "mcp-go") != (c.name == "mcp-go client") {
					// Each host and each client run by default; the
					// crossed pairs cost 45 s on a loaded machine.
					testenv.SkipUnlessFull(t)
				}
				off := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
				call := c.connect(t, h.serve(t, off))
				for _, st := range shapeTools {
					t.Run(st.name, func(t *testing.T) { checkShape(t, st, call(st.name)) })
				}
			})
		}
	}
}

// TestConformanceShapesTypeScript runs every shape on both hosts through
// the official TypeScript SDK client.
func TestConformanceShapesTypeScript(t *testing.T) {
	ts := e2e.TSClient(t)
	for _, h := range shapeHosts {
		t.Run(h.name, func(t *testing.T) {
			off := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
			var steps []e2e.Step
			for _, st := range shapeTools {
				steps = append(steps, e2e.CallTool(st.name, map[string]any{}))
			}
			got := ts.RunHTTP(t, h.serve(t, off), "shapes-ts", steps)
			for i, st := range shapeTools {
				t.Run(st.name, func(t *testing.T) {
					require.True(t, got[i].OK, got[i].Error)
					var r rawResult
					require.NoError(t, json.Unmarshal(got[i].Result, &r))
					checkShape(t, st, r)
				})
			}
		})
	}
}
