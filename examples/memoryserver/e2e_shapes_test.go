package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests call the tools of every result shape (export_memories typed
// with an output schema, audit_log plain text, memory_graph an object of
// two large arrays) through both Go clients, on both hosts, and compare
// each result with the same call to a server that does not offload: the
// tool's own output.

// toolResult is a tool result as either client received it.
type toolResult struct {
	IsError    bool
	Texts      []string
	Links      []string        // URIs of resource links
	Structured json.RawMessage // nil when the result had none
}

// shapeClient is a connection to the server through one of the Go clients.
type shapeClient struct {
	call func(t *testing.T, name string, args map[string]any) toolResult
	// tool returns the tool named name as tools/list sent it.
	tool func(t *testing.T, name string) json.RawMessage
}

// goClients are the clients every shape test runs through.
var goClients = []string{"go-sdk", "mcp-go"}

// connectShapes starts the server on host sdk, writing its files to out,
// and connects to it with client.
func connectShapes(t *testing.T, client, sdk, out string, env ...string) shapeClient {
	t.Helper()
	ctx := context.Background()
	if client == "go-sdk" {
		cs, err := sdkClient().Connect(ctx, &mcp.CommandTransport{Command: serverCmd(out, env, "-sdk", sdk)}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		return shapeClient{
			call: func(t *testing.T, name string, args map[string]any) toolResult {
				t.Helper()
				res, err := callSDK(t, cs, name, args)
				require.NoError(t, err)
				r := toolResult{IsError: res.IsError}
				for _, c := range res.Content {
					if l, ok := c.(*mcp.ResourceLink); ok {
						r.Links = append(r.Links, l.URI)
						continue
					}
					r.Texts = append(r.Texts, c.(*mcp.TextContent).Text)
				}
				if res.StructuredContent != nil {
					r.Structured, err = json.Marshal(res.StructuredContent)
					require.NoError(t, err)
				}
				return r
			},
			tool: func(t *testing.T, name string) json.RawMessage {
				for tl, err := range cs.Tools(ctx, nil) {
					require.NoError(t, err)
					if tl.Name == name {
						b, err := json.Marshal(tl)
						require.NoError(t, err)
						return b
					}
				}
				t.Fatalf("no tool %s", name)
				return nil
			},
		}
	}
	c, err := mcpclient.NewStdioMCPClient(serverBin, append([]string{"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + out}, env...), "-sdk", sdk)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "e2e-mcp-go", Version: "1"}
	_, err = c.Initialize(ctx, init)
	require.NoError(t, err)
	return shapeClient{
		call: func(t *testing.T, name string, args map[string]any) toolResult {
			t.Helper()
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			req := mcpgo.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = name, args
			res, err := c.CallTool(ctx, req)
			require.NoError(t, err)
			return mcpGoResult(t, res.Content, res.StructuredContent, res.IsError)
		},
		tool: func(t *testing.T, name string) json.RawMessage {
			list, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
			require.NoError(t, err)
			for _, tl := range list.Tools {
				if tl.Name == name {
					b, err := json.Marshal(tl)
					require.NoError(t, err)
					return b
				}
			}
			t.Fatalf("no tool %s", name)
			return nil
		},
	}
}

func mcpGoResult(t *testing.T, content []mcpgo.Content, structured any, isError bool) toolResult {
	t.Helper()
	r := toolResult{IsError: isError}
	for _, c := range content {
		if l, ok := c.(mcpgo.ResourceLink); ok {
			r.Links = append(r.Links, l.URI)
			continue
		}
		r.Texts = append(r.Texts, c.(mcpgo.TextContent).Text)
	}
	if structured != nil {
		var err error
		r.Structured, err = json.Marshal(structured)
		require.NoError(t, err)
	}
	return r
}

// descriptorOf returns the descriptor a result holds, which it must: its
// one text, and its structured content when the tool's output had one.
func descriptorOf(t *testing.T, r toolResult, structured bool) lro.OffloadResponse {
	t.Helper()
	require.False(t, r.IsError, "%v", r.Texts)
	require.Len(t, r.Texts, 1)
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &d), "%.300s", r.Texts[0])
	require.True(t, d.Offloaded, "%.300s", r.Texts[0])
	assert.Less(t, len(r.Texts[0]), 16<<10, "the descriptor is small")
	if structured {
		assert.JSONEq(t, r.Texts[0], string(r.Structured), "the structured content is the descriptor too")
	} else {
		assert.Nil(t, r.Structured)
	}
	return d
}

// readOffloaded reads an offloaded file: it must be in dir, its header
// must count count records, and it must hold that many.
func readOffloaded(t *testing.T, path, dir string, count int) []json.RawMessage {
	t.Helper()
	checkFile(t, lro.OffloadResponse{FilePath: path}, dir, count)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	require.True(t, sc.Scan())
	var h lro.OffloadHeader
	require.NoError(t, json.Unmarshal(sc.Bytes(), &h))
	assert.Equal(t, lro.HeaderType, h.Type)
	assert.Equal(t, count, h.Count, "the header's count")
	var recs []json.RawMessage
	for sc.Scan() {
		recs = append(recs, json.RawMessage(sc.Text()))
	}
	require.NoError(t, sc.Err())
	assert.Len(t, recs, count)
	return recs
}

func TestShapes(t *testing.T) {
	t.Parallel() // beside the tests that wait
	for _, sdk := range sdks {
		for _, client := range goClients {
			t.Run("server="+sdk+"/client="+client, func(t *testing.T) { testShapes(t, sdk, client) })
		}
	}
}

func testShapes(t *testing.T, sdk, client string) {
	out := t.TempDir()
	c := connectShapes(t, client, sdk, out)
	// ref is the same server without offloading: it sends each tool's own
	// output.
	ref := connectShapes(t, client, sdk, t.TempDir(), "ATLATL_PROMPT__OFFLOAD__ENABLED=false")

	t.Run("small results stay inline", func(t *testing.T) {
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"export_memories", map[string]any{"limit": 3, "detail": "medium"}},
			{"audit_log", map[string]any{"lines": 5}},
			{"memory_graph", map[string]any{"limit": 5}},
		} {
			got, want := c.call(t, tc.tool, tc.args), ref.call(t, tc.tool, tc.args)
			require.False(t, got.IsError, "%s: %v", tc.tool, got.Texts)
			assert.Equal(t, want, got, "%s: exactly the tool's output", tc.tool)
			assert.NotContains(t, got.Texts[0], `"offloaded"`)
		}
		entries, err := os.ReadDir(out)
		require.NoError(t, err)
		assert.Empty(t, entries, "no file is written")
	})

	t.Run("export_memories", func(t *testing.T) {
		args := map[string]any{"limit": 300, "detail": "medium"}
		var want struct {
			Count    int               `json:"count"`
			Memories []json.RawMessage `json:"memories"`
		}
		w := ref.call(t, "export_memories", args)
		require.NoError(t, json.Unmarshal([]byte(w.Texts[0]), &want))
		assert.JSONEq(t, w.Texts[0], string(w.Structured), "a typed tool's text is its structured content")
		require.Equal(t, 300, want.Count)

		d := descriptorOf(t, c.call(t, "export_memories", args), true)
		assert.Equal(t, "export", d.Summary.Operation)
		assert.Equal(t, lro.DetailMedium, d.Summary.Detail)
		assert.Equal(t, 300, d.Summary.Count)
		recs := readOffloaded(t, d.FilePath, out, 300)
		for i, r := range recs {
			require.JSONEq(t, string(want.Memories[i]), string(r), "record %d", i)
		}

		// (a): the listed output schema admits the descriptor as well as
		// the tool's output; the server without offloading lists it as
		// declared. mcp-go's client keeps only the type, properties and
		// required of an output schema, not the anyOf that widens it.
		if client == "mcp-go" {
			return
		}
		assert.Contains(t, string(c.tool(t, "export_memories")), "lro offload descriptor", "(a) widened output schema")
		assert.NotContains(t, string(ref.tool(t, "export_memories")), "lro offload descriptor")
		assert.Contains(t, string(ref.tool(t, "export_memories")), `"outputSchema"`)
	})

	t.Run("audit_log", func(t *testing.T) {
		args := map[string]any{"lines": 600}
		w := ref.call(t, "audit_log", args)
		require.Nil(t, w.Structured)
		lines := strings.Split(strings.TrimSuffix(w.Texts[0], "\n"), "\n")
		require.Len(t, lines, 600)

		d := descriptorOf(t, c.call(t, "audit_log", args), false)
		assert.Equal(t, "audit_log", d.Summary.Operation)
		assert.Equal(t, 600, d.Summary.Count)
		recs := readOffloaded(t, d.FilePath, out, 600)
		for i, r := range recs {
			var rec struct {
				Line int    `json:"line"`
				Text string `json:"text"`
			}
			require.NoError(t, json.Unmarshal(r, &rec))
			require.Equal(t, i+1, rec.Line)
			require.Equal(t, lines[i], rec.Text)
		}
	})

	t.Run("memory_graph", func(t *testing.T) {
		args := map[string]any{"limit": 300}
		var want struct {
			Generated string            `json:"generated"`
			Limit     int               `json:"limit"`
			Nodes     []json.RawMessage `json:"nodes"`
			Edges     []json.RawMessage `json:"edges"`
		}
		w := ref.call(t, "memory_graph", args)
		require.NoError(t, json.Unmarshal([]byte(w.Texts[0]), &want))
		require.Len(t, want.Nodes, 300)
		require.NotEmpty(t, want.Edges)

		// (b): one file a large array. The descriptor's file_path holds
		// the largest (edges), sections list the others (nodes), and the
		// small fields are in summary.extra. Counted across file_path and
		// sections: nodes = limit, edges = the edges the tool computes.
		d := descriptorOf(t, c.call(t, "memory_graph", args), true)
		counts := map[string]int{d.Section: d.Summary.Count}
		files := map[string]string{d.Section: d.FilePath}
		for _, s := range d.Sections {
			counts[s.Section] = s.Count
			files[s.Section] = s.FilePath
			assert.NotEmpty(t, s.LineSchema, "section %s", s.Section)
			assert.NotEmpty(t, s.JQRecipes, "section %s", s.Section)
		}
		require.Equal(t, map[string]int{"nodes": 300, "edges": len(want.Edges)}, counts, "(b) record counts by section")
		assert.Equal(t, "edges", d.Section, "(b) the largest array is the main file")
		for section, elements := range map[string][]json.RawMessage{"nodes": want.Nodes, "edges": want.Edges} {
			recs := readOffloaded(t, files[section], out, len(elements))
			for i, r := range recs {
				require.JSONEq(t, string(elements[i]), string(r), "%s record %d", section, i)
			}
		}
		assert.JSONEq(t, `"`+want.Generated+`"`, string(d.Summary.Extra["generated"]), "(b) small fields in summary.extra")
		assert.JSONEq(t, "300", string(d.Summary.Extra["limit"]), "(b) small fields in summary.extra")
	})
}

// TestShapesSameOnBothHosts calls each tool on both hosts, without
// offloading: the outputs are the same, byte for byte.
func TestShapesSameOnBothHosts(t *testing.T) {
	env := "ATLATL_PROMPT__OFFLOAD__ENABLED=false"
	mcpGo := connectShapes(t, "go-sdk", "mcp-go", t.TempDir(), env)
	official := connectShapes(t, "go-sdk", "official", t.TempDir(), env)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"export_memories", map[string]any{"limit": 50, "detail": "full"}},
		{"export_memories", nil},
		{"audit_log", map[string]any{"lines": 100}},
		{"audit_log", nil},
		{"memory_graph", map[string]any{"limit": 40}},
		{"memory_graph", nil},
	} {
		a, b := mcpGo.call(t, tc.tool, tc.args), official.call(t, tc.tool, tc.args)
		require.False(t, a.IsError, "%s: %v", tc.tool, a.Texts)
		assert.Equal(t, a, b, "%s %v", tc.tool, tc.args)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"export_memories", map[string]any{"limit": 0}},
		{"audit_log", map[string]any{"lines": 1.5}},
		{"memory_graph", map[string]any{"limit": "many"}},
	} {
		assert.True(t, mcpGo.call(t, tc.tool, tc.args).IsError, "%s %v", tc.tool, tc.args)
		assert.True(t, official.call(t, tc.tool, tc.args).IsError, "%s %v", tc.tool, tc.args)
	}
}

// TestRecallAsTask runs recall_memories as a task on mcp-go, through
// mcp-go's client: tasks/result returns the descriptor. The official SDK
// has no tasks.
func TestRecallAsTask(t *testing.T) {
	out := t.TempDir()
	c, err := mcpclient.NewStdioMCPClient(serverBin, []string{"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + out}, "-sdk", "mcp-go")
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "e2e-mcp-go", Version: "1"}
	// Tasks belong to the 2025-11-25 protocol, whose sessions keep them.
	init.Params.ProtocolVersion = "2025-11-25"
	initRes, err := c.Initialize(ctx, init)
	require.NoError(t, err)
	require.NotNil(t, initRes.Capabilities.Tasks, "the server has tasks")

	list, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	require.NoError(t, err)
	for _, tl := range list.Tools {
		if tl.Name == "recall_memories" {
			require.NotNil(t, tl.Execution)
			assert.Equal(t, mcpgo.TaskSupportOptional, tl.Execution.TaskSupport)
		}
	}

	// runTask calls recall_memories as a task and returns tasks/result.
	// The client's CallTool expects a tool result, not the task it is
	// answered with, so the call goes through the transport.
	id := 0
	runTask := func(args map[string]any) toolResult {
		id++
		resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
			JSONRPC: mcpgo.JSONRPC_VERSION,
			ID:      mcpgo.NewRequestId(fmt.Sprintf("task-%d", id)),
			Method:  string(mcpgo.MethodToolsCall),
			Params:  mcpgo.CallToolParams{Name: "recall_memories", Arguments: args, Task: &mcpgo.TaskParams{}},
		})
		require.NoError(t, err)
		require.Nil(t, resp.Error)
		var created mcpgo.CreateTaskResult
		require.NoError(t, json.Unmarshal(resp.Result, &created), "%s", resp.Result)
		require.NotEmpty(t, created.Task.TaskId, "%s", resp.Result)

		done, err := c.WaitForTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: created.Task.TaskId}}, 20*time.Millisecond)
		require.NoError(t, err)
		require.Equal(t, mcpgo.TaskStatusCompleted, done.Status, "%s", done.StatusMessage)
		res, err := c.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: created.Task.TaskId}})
		require.NoError(t, err)
		return mcpGoResult(t, res.Content, res.StructuredContent, res.IsError)
	}

	d := descriptorOf(t, runTask(map[string]any{"query": "deployment", "limit": 200, "detail": "medium"}), true)
	assert.Equal(t, "recall", d.Summary.Operation)
	assert.Equal(t, lro.DetailMedium, d.Summary.Detail)
	readOffloaded(t, d.FilePath, out, 200)

	small := runTask(map[string]any{"query": "deployment", "limit": 3})
	require.False(t, small.IsError)
	assert.Contains(t, small.Texts[0], `"results":[`, "below the threshold: inline")
	assert.NotContains(t, small.Texts[0], `"offloaded"`)
}
