// Package e2e is test support: it drives the official TypeScript MCP SDK
// client (tsclient/client.mjs, run with node) against servers under test, so
// tests see results exactly as that client accepts or rejects them. The
// client validates a tool result's structuredContent against the tool's
// output schema, which mcp-go's own client does not.
//
// Install the client's dependencies once with
//
//	cd internal/e2e/tsclient && npm ci
//
// Without node or those dependencies, tests that use the client are skipped.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Timeout bounds one run of the TypeScript client, connection included.
const Timeout = 60 * time.Second

// Step is one operation of a plan the TypeScript client executes in order.
type Step struct {
	// Op is "listTools", "callTool", "callToolAsTask", "listResources" or
	// "readResource".
	Op string `json:"op"`
	// Name is the tool to call (callTool, callToolAsTask).
	Name string `json:"name,omitempty"`
	// Arguments are the tool's arguments (callTool, callToolAsTask).
	Arguments map[string]any `json:"arguments,omitempty"`
	// URI is the resource to read (readResource).
	URI string `json:"uri,omitempty"`
	// Method and Params are the request of a "request" step.
	Method string         `json:"method,omitempty"`
	Params map[string]any `json:"params,omitempty"`
	// Ms is how long a "sleep" step waits.
	Ms int `json:"ms,omitempty"`
}

// Request returns a step that sends any request and returns its result as
// the server sent it.
func Request(method string, params map[string]any) Step {
	return Step{Op: "request", Method: method, Params: params}
}

// CallToolProgress returns a step that calls the named tool with a
// progress token: its result carries the progress notifications the
// client received for it, as _progress.
func CallToolProgress(name string, args map[string]any) Step {
	return Step{Op: "callToolProgress", Name: name, Arguments: args}
}

// Notifications returns a step whose result is the notifications the
// client has received (but progress) since the last such step.
func Notifications() Step { return Step{Op: "notifications"} }

// Sleep returns a step that waits ms milliseconds.
func Sleep(ms int) Step { return Step{Op: "sleep", Ms: ms} }

// SendRootsListChanged returns a step that sends
// notifications/roots/list_changed.
func SendRootsListChanged() Step { return Step{Op: "sendRootsListChanged"} }

// ListTools returns a step that lists the server's tools.
func ListTools() Step { return Step{Op: "listTools"} }

// CallTool returns a step that calls the named tool. The client lists tools
// before its first call if the plan has not, as a host does, so that it
// knows the output schemas it validates against.
func CallTool(name string, args map[string]any) Step {
	return Step{Op: "callTool", Name: name, Arguments: args}
}

// CallToolAsTask returns a step that calls the named tool as a task, with
// the SDK's experimental tasks API: a task-augmented tools/call, tasks/get
// until the task ends, then tasks/result, whose result is the step's. The
// server must offer tasks for tools/call. The client lists tools first, as
// for CallTool.
func CallToolAsTask(name string, args map[string]any) Step {
	return Step{Op: "callToolAsTask", Name: name, Arguments: args}
}

// ListResources returns a step that lists the server's resources.
func ListResources() Step { return Step{Op: "listResources"} }

// ReadResource returns a step that reads the resource at uri.
func ReadResource(uri string) Step { return Step{Op: "readResource", URI: uri} }

// StepResult is the outcome of one Step.
type StepResult struct {
	// OK reports whether the SDK returned a result rather than throwing.
	OK bool `json:"ok"`
	// Result is the SDK's returned result object, as JSON, when OK.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the message the SDK threw, when not OK: a JSON-RPC error
	// from the server, or a client-side check such as "Structured content
	// does not match the tool's output schema".
	Error string `json:"error,omitempty"`
}

// TS runs the TypeScript MCP SDK client. Its methods must be called from the
// test's goroutine: they end the test on failure.
type TS struct {
	node   string // path to the node binary
	script string // path to client.mjs
}

// TSClient returns the TypeScript client, or skips the test with the reason
// when node or the client's npm dependencies are not installed.
func TSClient(t testing.TB) *TS {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("TypeScript MCP client: node not found on PATH")
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		t.Skip("TypeScript MCP client: cannot locate internal/e2e/tsclient (built with -trimpath?)")
	}
	dir := filepath.Join(filepath.Dir(file), "tsclient")
	sdk := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	if _, err := os.Stat(sdk); err != nil {
		t.Skipf("TypeScript MCP client: SDK not installed (run npm ci in %s): %v", dir, err)
	}
	return &TS{node: node, script: filepath.Join(dir, "client.mjs")}
}

// RunHTTP connects to the streamable HTTP server at url as clientName, runs
// steps, and returns one result per step.
func (ts *TS) RunHTTP(t testing.TB, url, clientName string, steps []Step) []StepResult {
	t.Helper()
	return ts.run(t, []string{"--name", clientName, "--url", url}, steps)
}

// RunStdio starts command with args as a stdio server, connects to it as
// clientName, runs steps, and returns one result per step. The server's
// environment is the test process's plus env, a list of "KEY=VALUE" entries;
// its stderr is logged with the test's output.
func (ts *TS) RunStdio(t testing.TB, clientName, command string, args, env []string, steps []Step) []StepResult {
	t.Helper()
	argv := []string{"--name", clientName}
	for _, kv := range env {
		argv = append(argv, "--env", kv)
	}
	argv = append(argv, "--", command)
	return ts.run(t, append(argv, args...), steps)
}

// RunStdioFeatures is RunStdio with a client that declares sampling,
// elicitation and roots and answers them: sampling/createMessage with
// "sampled: " and the last message's text, elicitation/create by accepting
// with a value for each requested field, roots/list with roots.
func (ts *TS) RunStdioFeatures(t testing.TB, clientName string, roots []string, command string, args []string, steps []Step) []StepResult {
	t.Helper()
	argv := []string{"--name", clientName, "--features"}
	for _, r := range roots {
		argv = append(argv, "--root", r)
	}
	argv = append(argv, "--", command)
	return ts.run(t, append(argv, args...), steps)
}

// RunHTTPFeatures is RunHTTP with the client of RunStdioFeatures, which
// declares sampling, elicitation and roots and answers them.
func (ts *TS) RunHTTPFeatures(t testing.TB, url, clientName string, roots []string, steps []Step) []StepResult {
	t.Helper()
	argv := []string{"--name", clientName, "--features", "--url", url}
	for _, r := range roots {
		argv = append(argv, "--root", r)
	}
	return ts.run(t, argv, steps)
}

// NodeBin returns the path of the named program installed by npm in the
// client's folder (node_modules/.bin), or skips the test.
func NodeBin(t testing.TB, name string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Skip("cannot locate internal/e2e/tsclient")
	}
	p := filepath.Join(filepath.Dir(file), "tsclient", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not installed (run npm ci in internal/e2e/tsclient): %v", name, err)
	}
	return p
}

func (ts *TS) run(t testing.TB, args []string, steps []Step) []StepResult {
	t.Helper()
	plan, err := json.Marshal(steps)
	if err != nil {
		t.Fatalf("TypeScript MCP client: encoding plan: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, ts.node, append([]string{ts.script}, args...)...)
	cmd.Stdin = bytes.NewReader(plan)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second // a stdio server left holding stderr open
	err = cmd.Run()
	if stderr.Len() > 0 {
		t.Logf("TypeScript MCP client stderr:\n%s", stderr.Bytes())
	}
	if err != nil {
		t.Fatalf("TypeScript MCP client: %v (context: %v)", err, ctx.Err())
	}

	results := make([]StepResult, 0, len(steps))
	for dec := json.NewDecoder(&stdout); ; {
		var r StepResult
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("TypeScript MCP client: decoding output line %d: %v", len(results)+1, err)
		}
		results = append(results, r)
	}
	if len(results) != len(steps) {
		t.Fatalf("TypeScript MCP client: %d results for %d steps", len(results), len(steps))
	}
	return results
}

// Structured checks that the client accepted a tool result that is not a
// tool error and has structured content, and returns that content.
func (r StepResult) Structured(t testing.TB) map[string]any {
	t.Helper()
	if !r.OK {
		t.Fatalf("the TypeScript client rejected the result: %s", r.Error)
	}
	var res struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("decoding the result: %v", err)
	}
	if res.IsError || res.StructuredContent == nil {
		t.Fatalf("want a successful result with structured content, got %s", r.Result)
	}
	return res.StructuredContent
}
