package lro_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/e2e"
	"github.com/mcplro/lro/mcpgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Task tools: an AddTaskTool handler is offloaded only when wrapped with
// TaskHandler or WrapTask (mcp-go's tool middleware does not reach it), and
// left unwrapped it is logged once; an ordinary tool called as a task goes
// through the middleware. Results are fetched with tasks/result, as a
// client does.

// taskOf turns an ordinary handler into a task tool's, whose result also
// carries a _meta field of its own, which offloading must keep.
func taskOf(h server.ToolHandlerFunc) server.TaskToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		r, err := h(ctx, req)
		if err != nil {
			return nil, err
		}
		return &mcp.CreateTaskResult{
			Result:            mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{"example.com/trace": "t-1"}}},
			Content:           r.Content,
			StructuredContent: r.StructuredContent,
			IsError:           r.IsError,
		}, nil
	}
}

func failingTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultError(strings.Repeat("boom ", 5000)), nil
}

// taskTool declares a tool that must be called as a task.
func taskTool(name string) mcp.Tool {
	return mcp.NewTool(name, mcp.WithTaskSupport(mcp.TaskSupportRequired))
}

// taskServer returns an mcp-go server that offers tasks, with off's
// ServerOption.
func taskServer(off *lro.Offloader) *server.MCPServer {
	return server.NewMCPServer("tasks", "1", server.WithTaskCapabilities(true, true, true), mcpgo.ServerOption(off))
}

// connectTasks connects an in-process client in protocol 2025-11-25:
// mcp-go answers tasks/result with "method not found" in 2026-07-28.
func connectTasks(t *testing.T, s *server.MCPServer, opts ...client.ClientOption) *client.Client {
	return connect(t, s, append(opts, client.WithProtocolVersion(mcp.ProtocolVersion20251125))...)
}

var taskCallID atomic.Int64

// callAsTask calls tool as a task through c and returns its tasks/result
// as a tool result. mcp-go's client has no task-augmented call (CallTool
// wants content in the reply, which a CreateTaskResult has not), so the
// tools/call goes through the client's own transport, in its session.
func callAsTask(t *testing.T, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	params := map[string]any{"name": tool, "task": map[string]any{"ttl": 60000}}
	if args != nil {
		params["arguments"] = args
	}
	resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(fmt.Sprintf("task-%d", taskCallID.Add(1))),
		Method:  string(mcp.MethodToolsCall),
		Params:  params,
	})
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	var created mcp.CreateTaskResult
	require.NoError(t, json.Unmarshal(resp.Result, &created))
	require.NotEmpty(t, created.Task.TaskId, string(resp.Result))
	res, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: created.Task.TaskId}})
	require.NoError(t, err)
	return &mcp.CallToolResult{Result: res.Result, Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}
}

// rowCount returns the number of records of an inline audit log result.
func rowCount(t *testing.T, res *mcp.CallToolResult) int {
	t.Helper()
	var rows []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(textOf(t, res, 0)), &rows))
	return len(rows)
}

func TestTaskHandlerOffloadsTaskResults(t *testing.T) {
	o := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	s := taskServer(o)
	s.AddTaskTool(taskTool("audit_task"), mcpgo.TaskHandler(o, taskOf(auditLog(600))))
	s.AddTaskTool(taskTool("small_task"), mcpgo.TaskHandler(o, taskOf(auditLog(2))))
	s.AddTaskTool(taskTool("failing_task"), mcpgo.TaskHandler(o, taskOf(failingTool)))
	// WrapTask's policy, not the configured one, names the operation.
	s.AddTaskTool(taskTool("export"), mcpgo.WrapTask(o, lro.ToolPolicy{Generic: true, Operation: "dump"}, taskOf(auditLog(650))))
	c := connectTasks(t, s)

	res := callAsTask(t, c, "audit_task", nil)
	d := descriptor(t, res)
	assert.Equal(t, "audit_task", d.Summary.Operation)
	assert.Equal(t, 600, d.Summary.Count)
	_, lines := readJSONL(t, readFile(t, d.FilePath))
	assert.Len(t, lines, 600)
	b, _ := json.Marshal(res.StructuredContent)
	assert.Contains(t, string(b), `"offloaded":true`, "structured content is replaced too")
	require.NotNil(t, res.Meta)
	assert.Equal(t, "t-1", res.Meta.AdditionalFields["example.com/trace"], "the handler's _meta is kept")

	small := callAsTask(t, c, "small_task", nil)
	assert.False(t, isDescriptor(t, small))
	assert.Equal(t, 2, rowCount(t, small))

	failed := callAsTask(t, c, "failing_task", nil)
	assert.True(t, failed.IsError)
	assert.Contains(t, textOf(t, failed, 0), "boom boom", "errors pass untouched, however large")

	d = descriptor(t, callAsTask(t, c, "export", nil))
	assert.Equal(t, "dump", d.Summary.Operation)
	assert.Equal(t, 650, d.Summary.Count)
}

// An ordinary tool that supports tasks runs, as a task, in a goroutine of
// its own, through the tool middleware: it is offloaded as it is when
// called directly.
func TestOptionalTaskToolOffloaded(t *testing.T) {
	o := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	s := taskServer(o)
	s.AddTool(mcp.NewTool("audit_log", mcp.WithTaskSupport(mcp.TaskSupportOptional)), auditLog(600))
	c := connectTasks(t, s)

	asTask := descriptor(t, callAsTask(t, c, "audit_log", nil))
	assert.Equal(t, 600, asTask.Summary.Count)
	_, lines := readJSONL(t, readFile(t, asTask.FilePath))
	assert.Len(t, lines, 600)

	direct := descriptor(t, callTool(t, c, "audit_log", nil))
	assert.Equal(t, 600, direct.Summary.Count)
	assert.NotEqual(t, asTask.FilePath, direct.FilePath)
}

// The task's goroutine still sees the client and the server of the call
// that created it: a proxy client gets the full result, and guidance names
// lro_extract only on the server that serves it, though the Offloader
// serves it elsewhere.
func TestTaskSeesClientAndServer(t *testing.T) {
	o := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	tool := mcp.NewTool("audit_log", mcp.WithTaskSupport(mcp.TaskSupportOptional))
	plain := taskServer(o)
	plain.AddTool(tool, auditLog(600))
	plain.AddTaskTool(taskTool("audit_task"), mcpgo.TaskHandler(o, taskOf(auditLog(600))))
	native := taskServer(o)
	native.AddTool(tool, auditLog(600))
	native.AddTaskTool(taskTool("audit_task"), mcpgo.TaskHandler(o, taskOf(auditLog(600))))
	mcpgo.AddExtractTool(native, o)

	proxy := connectTasks(t, plain, client.WithClientCapabilities(mcp.ClientCapabilities{
		Experimental: map[string]any{host.ProxyCapability: map[string]any{}},
	}))
	plainClient, nativeClient := connectTasks(t, plain), connectTasks(t, native)
	for _, name := range []string{"audit_log", "audit_task"} {
		t.Run(name, func(t *testing.T) {
			res := callAsTask(t, proxy, name, nil)
			assert.False(t, isDescriptor(t, res), "a proxy offloads on its own side")
			assert.Equal(t, 600, rowCount(t, res))

			assert.NotContains(t, descriptor(t, callAsTask(t, plainClient, name, nil)).Guidance, lro.ExtractToolName)
			assert.Contains(t, descriptor(t, callAsTask(t, nativeClient, name, nil)).Guidance, lro.ExtractToolName+"(")
		})
	}
}

// A task tool registered without TaskHandler is not offloaded, but its
// first large result is logged, with the fix, once however many calls;
// never for results that were offloaded, small, errors, or left inline by
// a wrapper on purpose.
func TestUnwrappedTaskToolLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	generic := lro.ToolPolicy{Generic: true}
	o := newOffloader(t, nil, lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		lro.WithTool("raw_task", generic), lro.WithTool("raw_small", generic),
		lro.WithTool("raw_failing", generic), lro.WithTool("wrapped_task", generic))
	s := taskServer(o)
	s.AddTaskTool(taskTool("raw_task"), taskOf(auditLog(600)))
	s.AddTaskTool(taskTool("raw_small"), taskOf(auditLog(2)))
	s.AddTaskTool(taskTool("raw_failing"), taskOf(failingTool))
	s.AddTaskTool(taskTool("wrapped_task"), mcpgo.TaskHandler(o, taskOf(auditLog(600))))
	// Wrapped, but inline for want of a policy: the core says so instead.
	s.AddTaskTool(taskTool("no_policy_task"), mcpgo.TaskHandler(o, taskOf(auditLog(600))))
	c := connectTasks(t, s)
	for range 3 {
		assert.Equal(t, 600, rowCount(t, callAsTask(t, c, "raw_task", nil)), "passed through")
		callAsTask(t, c, "raw_small", nil)
		callAsTask(t, c, "raw_failing", nil)
		descriptor(t, callAsTask(t, c, "wrapped_task", nil))
		assert.Equal(t, 600, rowCount(t, callAsTask(t, c, "no_policy_task", nil)))
	}

	about := func(tool string) []string {
		var out []string
		for line := range strings.Lines(logs.String()) {
			if strings.Contains(line, "tool="+tool+" ") {
				out = append(out, line)
			}
		}
		return out
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "mcpgo.TaskHandler"), logs.String())
	if raw := about("raw_task"); assert.Len(t, raw, 1, logs.String()) {
		assert.Contains(t, raw[0], "s.AddTaskTool(tool, mcpgo.TaskHandler(off, handler))")
	}
	for _, tool := range []string{"raw_small", "raw_failing", "wrapped_task"} {
		assert.Empty(t, about(tool))
	}
	if np := about("no_policy_task"); assert.Len(t, np, 1, logs.String()) {
		assert.Contains(t, np[0], "has no offload policy")
	}
}

// TestTaskToolsTypeScript calls both kinds of task tools as tasks through
// the official TypeScript SDK client over streamable HTTP. It skips
// without node and the client's node_modules.
func TestTaskToolsTypeScript(t *testing.T) {
	ts := e2e.TSClient(t)
	o := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	s := taskServer(o)
	s.AddTaskTool(taskTool("audit_task"), mcpgo.TaskHandler(o, taskOf(auditLog(600))))
	// The client wants structured content to be an object.
	s.AddTaskTool(taskTool("small_task"), mcpgo.TaskHandler(o, taskOf(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultJSON(map[string]any{"rows": []int{1, 2}})
	})))
	s.AddTool(mcp.NewTool("audit_log", mcp.WithTaskSupport(mcp.TaskSupportOptional)), auditLog(600))
	url := serveHTTP(t, server.NewStreamableHTTPServer(s))

	got := tsResults(t, ts.RunHTTP(t, url, "tasks-ts", []e2e.Step{
		e2e.CallToolAsTask("audit_task", nil),
		e2e.CallToolAsTask("audit_log", nil),
		e2e.CallTool("audit_log", nil),
		e2e.CallToolAsTask("small_task", nil),
	}))
	for i, r := range got[:3] {
		require.Len(t, r.Texts, 1, "step %d", i)
		var d lro.OffloadResponse
		require.NoError(t, json.Unmarshal([]byte(r.Texts[0]), &d), "step %d: %.200s", i, r.Texts[0])
		require.True(t, d.Offloaded, "step %d", i)
		assert.Equal(t, 600, d.Summary.Count, "step %d", i)
		_, lines := readJSONL(t, readFile(t, d.FilePath))
		assert.Len(t, lines, 600, "step %d", i)
	}
	require.Len(t, got[3].Texts, 1)
	assert.False(t, isDescriptorText(got[3].Texts))
	assert.JSONEq(t, `{"rows":[1,2]}`, got[3].Texts[0])
	assert.JSONEq(t, `{"rows":[1,2]}`, string(got[3].Structured))
}
