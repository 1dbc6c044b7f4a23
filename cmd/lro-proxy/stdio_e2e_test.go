//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/internal/e2e"
)

// The reference servers from npm (internal/e2e/tsclient/package.json pins
// their versions), driven by the official TypeScript client, directly and
// through `lro-proxy -- COMMAND`.

// pidWrapped returns a command line that runs bin with args and writes its
// process id to pidfile first (exec keeps the id).
func pidWrapped(pidfile, bin string, args ...string) (string, []string) {
	script := fmt.Sprintf(`echo $$ > %q; exec "$0" "$@"`, pidfile)
	return "sh", append([]string{"-c", script, bin}, args...)
}

// alive reports whether the process pid runs (a zombie does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return runtime.GOOS != "linux"
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i > 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// readPid waits for pidfile and returns the id in it.
func readPid(t *testing.T, pidfile string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(pidfile)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		require.True(t, time.Now().Before(deadline), "the server did not start")
		time.Sleep(20 * time.Millisecond)
	}
}

// requireEnded fails unless pid has ended within 10 seconds.
func requireEnded(t *testing.T, pid int, why string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		require.True(t, time.Now().Before(deadline), "the server (pid %d) still runs %s", pid, why)
		time.Sleep(20 * time.Millisecond)
	}
}

// fsTree makes a directory tree of dirs*files small files, a large text
// file of lines lines, and a small one.
func fsTree(t *testing.T, dirs, files, lines int) string {
	root := t.TempDir()
	for d := range dirs {
		for f := range files {
			dir := filepath.Join(root, fmt.Sprintf("dir%02d", d), fmt.Sprintf("sub%d", f%3))
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%02d_%02d.txt", d, f)), []byte("x\n"), 0o644))
		}
	}
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "record number %d of the large file\n", i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "large.txt"), []byte(b.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "small.txt"), []byte("hello from a small file\n"), 0o644))
	return root
}

// toolResult decodes a tools/call result the client accepted.
type toolResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	} `json:"content"`
	Structured map[string]any `json:"structuredContent"`
	IsError    bool           `json:"isError"`
}

func decodeTool(t *testing.T, r e2e.StepResult) toolResult {
	t.Helper()
	require.True(t, r.OK, "the client rejected the result: %s", r.Error)
	var res toolResult
	require.NoError(t, json.Unmarshal(r.Result, &res))
	return res
}

// stdioDescriptor returns the offload descriptor of an offloaded result.
func stdioDescriptor(t *testing.T, r e2e.StepResult) map[string]any {
	t.Helper()
	res := decodeTool(t, r)
	require.False(t, res.IsError, "%s", r.Result)
	require.NotEmpty(t, res.Content)
	var d map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &d), "not a descriptor: %.300s", res.Content[0].Text)
	require.Equal(t, true, d["offloaded"], "not offloaded: %.300s", res.Content[0].Text)
	return d
}

func TestStdioFilesystemThroughProxy(t *testing.T) {
	ts := e2e.TSClient(t)
	fsBin := e2e.NodeBin(t, "mcp-server-filesystem")
	root := fsTree(t, 40, 12, 20000)
	out := t.TempDir()
	env := []string{"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + out}
	small := []e2e.Step{
		e2e.ListTools(),
		e2e.CallTool("list_allowed_directories", nil),
		e2e.CallTool("read_text_file", map[string]any{"path": filepath.Join(root, "small.txt")}),
		e2e.CallTool("read_text_file", map[string]any{"path": filepath.Join(root, "nowhere.txt")}),
		e2e.CallTool("list_directory", map[string]any{"path": filepath.Join(root, "dir01")}),
	}
	steps := append(small,
		e2e.CallTool("directory_tree", map[string]any{"path": root}),
		e2e.CallTool("read_text_file", map[string]any{"path": filepath.Join(root, "large.txt")}),
	)
	direct := ts.RunStdio(t, "direct", fsBin, []string{root}, env, steps)
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd, args := pidWrapped(pidfile, fsBin, root)
	proxied := ts.RunStdio(t, "through-proxy", proxyBin, append([]string{"--", cmd}, args...), env, steps)
	requireEnded(t, readPid(t, pidfile), "after the client disconnected")

	// The tools as the server lists them, output schemas widened, and
	// lro_extract beside them.
	var dl, pl struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(direct[0].Result, &dl))
	require.NoError(t, json.Unmarshal(proxied[0].Result, &pl))
	require.Len(t, pl.Tools, len(dl.Tools)+1)
	for i, dt := range dl.Tools {
		pt := pl.Tools[i]
		assert.JSONEq(t, string(dt["name"]), string(pt["name"]))
		assert.JSONEq(t, string(dt["inputSchema"]), string(pt["inputSchema"]), "input schema of %s", dt["name"])
		assert.JSONEq(t, string(dt["description"]), string(pt["description"]))
		if dt["outputSchema"] != nil {
			assert.Contains(t, string(pt["outputSchema"]), "anyOf", "output schema of %s widened", dt["name"])
			assert.Contains(t, string(pt["outputSchema"]), string(mustCompact(t, dt["outputSchema"]))[1:20])
		}
	}
	assert.JSONEq(t, `"lro_extract"`, string(pl.Tools[len(pl.Tools)-1]["name"]))

	// Small results, errors included, unchanged.
	for i := 1; i < len(small); i++ {
		require.Equal(t, direct[i].OK, proxied[i].OK, "step %d: %s / %s", i, direct[i].Error, proxied[i].Error)
		if direct[i].OK {
			assert.JSONEq(t, string(direct[i].Result), string(proxied[i].Result), "step %d", i)
		}
	}

	// The tree and the large file: inline directly, offloaded through the
	// proxy, then queried with lro_extract.
	assert.Greater(t, len(direct[len(small)].Result), 20000)
	tree := stdioDescriptor(t, proxied[len(small)])
	large := stdioDescriptor(t, proxied[len(small)+1])
	assert.GreaterOrEqual(t, tree["summary"].(map[string]any)["count"], float64(40*12))
	assert.Equal(t, float64(20000), large["summary"].(map[string]any)["count"])
	treeFile, largeFile := tree["file_path"].(string), large["file_path"].(string)
	assert.True(t, strings.HasPrefix(treeFile, out), treeFile)

	pidfile2 := filepath.Join(t.TempDir(), "pid")
	cmd, args = pidWrapped(pidfile2, fsBin, root)
	queried := ts.RunStdio(t, "through-proxy", proxyBin, append([]string{"--", cmd}, args...), env, []e2e.Step{
		e2e.CallTool("lro_extract", map[string]any{"file_path": largeFile, "query": `select(.text | test("record number 7777 ")) | .text`}),
		e2e.CallTool("lro_extract", map[string]any{"file_path": treeFile, "query": `select(.name == "file07_05.txt") | .path`}),
		e2e.CallTool("lro_extract", map[string]any{"file_path": largeFile, "grep": "number 1999[0-9] "}),
	})
	requireEnded(t, readPid(t, pidfile2), "after the client disconnected")
	for i, want := range []string{"record number 7777 of the large file", "file07_05.txt", "record number 19995 "} {
		res := decodeTool(t, queried[i])
		require.False(t, res.IsError, "%s", queried[i].Result)
		assert.Contains(t, res.Content[0].Text, want, "query %d", i)
	}
	assert.Contains(t, decodeTool(t, queried[1]).Content[0].Text, "dir07")
}

func mustCompact(t *testing.T, raw json.RawMessage) []byte {
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestStdioEverythingThroughProxy compares every feature of the reference
// "everything" server through the proxy with a direct connection: the
// client answers sampling, elicitation and roots; progress, prompts,
// resources, completions, logging, structured content and images.
func TestStdioEverythingThroughProxy(t *testing.T) {
	ts := e2e.TSClient(t)
	bin := e2e.NodeBin(t, "mcp-server-everything")
	steps := everythingSteps()
	roots := []string{"file:///tmp/lro-root-a"}
	direct := ts.RunStdioFeatures(t, "direct", roots, bin, nil, steps)
	proxied := ts.RunStdioFeatures(t, "through-proxy", roots, proxyBin, []string{"--", bin}, steps)
	compareEverything(t, steps, direct, proxied, nil)
}

// everythingSteps is a plan that uses every feature of the reference
// "everything" server; compareEverything knows its steps by index.
func everythingSteps() []e2e.Step {
	doc := "demo://resource/static/document/architecture.md"
	return []e2e.Step{
		e2e.Request("prompts/list", nil),
		e2e.Request("prompts/get", map[string]any{"name": "args-prompt", "arguments": map[string]any{"city": "Paris", "state": "TX"}}),
		e2e.Request("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "completable-prompt"}, "argument": map[string]any{"name": "department", "value": "E"}}),
		e2e.Request("resources/list", nil),
		e2e.Request("resources/read", map[string]any{"uri": doc}),
		e2e.Request("resources/read", map[string]any{"uri": "demo://resource/dynamic/text/3"}),
		e2e.Request("resources/subscribe", map[string]any{"uri": doc}),
		e2e.Request("resources/unsubscribe", map[string]any{"uri": doc}),
		e2e.Request("logging/setLevel", map[string]any{"level": "debug"}),
		e2e.CallTool("echo", map[string]any{"message": "hi there"}),
		e2e.CallTool("get-sum", map[string]any{"a": 2, "b": 40}),
		e2e.CallTool("get-structured-content", map[string]any{"location": "Chicago"}),
		e2e.CallTool("get-tiny-image", nil),
		e2e.CallTool("get-annotated-message", map[string]any{"messageType": "success", "includeImage": true}),
		e2e.CallTool("get-resource-links", map[string]any{"count": 2}),
		e2e.CallTool("trigger-sampling-request", map[string]any{"prompt": "tell me", "maxTokens": 10}),
		e2e.CallTool("trigger-elicitation-request", nil),
		e2e.CallTool("get-roots-list", nil),
		e2e.SendRootsListChanged(),
		e2e.CallToolProgress("trigger-long-running-operation", map[string]any{"duration": 1, "steps": 3}),
		e2e.Request("resources/templates/list", nil),
		e2e.Request("nonexistent/method", nil),
		e2e.Notifications(), // forget those so far
		e2e.Request("resources/subscribe", map[string]any{"uri": doc}),
		e2e.CallTool("toggle-simulated-logging", nil),
		e2e.CallTool("toggle-subscriber-updates", nil),
		e2e.Sleep(500),
		e2e.Notifications(),
		e2e.ListTools(),
	}
}

// compareEverything compares the answers to everythingSteps of a direct
// client and of one through the proxy: canonical JSON, equal, but where
// the proxy steps in (its lro:// templates after the server's) and what
// differs at each run (a dynamic resource, the notifications' timing).
// The steps in loose, by index, are compared as far as their reason
// says: an error by its code, a result by the checks after the loop.
func compareEverything(t *testing.T, steps []e2e.Step, direct, proxied []e2e.StepResult, loose map[int]string) {
	t.Helper()
	templates, notes, tools := 20, len(steps)-2, len(steps)-1
	for i, step := range steps {
		if i == templates || i == 5 || i >= notes-5 { // 5: a dynamic resource, made at each read
			continue
		}
		name := step.Method + step.Name
		require.Equal(t, direct[i].OK, proxied[i].OK, "%s: %s / %s", name, direct[i].Error, proxied[i].Error)
		if why, ok := loose[i]; ok {
			code := func(e string) string { c, _, _ := strings.Cut(e, ":"); return c }
			assert.Equal(t, code(direct[i].Error), code(proxied[i].Error), "%s (%s)", name, why)
			continue
		}
		if !direct[i].OK {
			assert.Equal(t, direct[i].Error, proxied[i].Error, name)
			continue
		}
		d, p := direct[i].Result, proxied[i].Result
		if i == 19 { // the last progress and the result race, directly too
			d, p = withoutProgress(t, d), withoutProgress(t, p)
		}
		assert.JSONEq(t, string(d), string(p), name)
	}
	// What the client answered came back in the tools' results.
	assert.Contains(t, string(proxied[15].Result), "sampled: ")
	assert.Contains(t, string(proxied[16].Result), "accept")
	assert.Contains(t, string(proxied[17].Result), "lro-root-a")
	assert.Contains(t, string(proxied[5].Result), "Resource 3: This is a plaintext resource")
	var dprog, prog struct {
		Progress []any `json:"_progress"`
	}
	require.NoError(t, json.Unmarshal(direct[19].Result, &dprog))
	require.NoError(t, json.Unmarshal(proxied[19].Result, &prog))
	assert.GreaterOrEqual(t, len(prog.Progress), 2, "progress notifications through the proxy")
	assert.Equal(t, dprog.Progress[:2], prog.Progress[:2])
	assert.Contains(t, string(proxied[12].Result), `"type":"image"`)
	// Log messages and resource updates, as a direct client gets them.
	methods := func(r e2e.StepResult) map[string]bool {
		var ns []struct {
			Method string `json:"method"`
		}
		require.NoError(t, json.Unmarshal(r.Result, &ns))
		m := map[string]bool{}
		for _, n := range ns {
			m[n.Method] = true
		}
		return m
	}
	assert.True(t, methods(direct[notes])["notifications/message"], "%s", direct[notes].Result)
	assert.Equal(t, methods(direct[notes]), methods(proxied[notes]), "%s", proxied[notes].Result)
	assert.True(t, methods(proxied[notes])["notifications/resources/updated"], "%s", proxied[notes].Result)
	// The server's templates, and the proxy's lro:// ones after them.
	var dt, pt struct {
		Templates []map[string]any `json:"resourceTemplates"`
	}
	require.NoError(t, json.Unmarshal(direct[templates].Result, &dt))
	require.NoError(t, json.Unmarshal(proxied[templates].Result, &pt))
	require.Greater(t, len(pt.Templates), len(dt.Templates))
	assert.Equal(t, dt.Templates, pt.Templates[:len(dt.Templates)])
	assert.Contains(t, pt.Templates[len(dt.Templates)]["uriTemplate"], "lro://")
	// The server's tools as it lists them, but for the output schemas the
	// proxy widens, and lro_extract after them.
	var dtl, ptl struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	require.True(t, proxied[tools].OK, proxied[tools].Error)
	require.NoError(t, json.Unmarshal(direct[tools].Result, &dtl))
	require.NoError(t, json.Unmarshal(proxied[tools].Result, &ptl))
	require.Len(t, ptl.Tools, len(dtl.Tools)+1)
	for i, dt := range dtl.Tools {
		pt := maps.Clone(ptl.Tools[i])
		if dt["outputSchema"] != nil {
			assert.Contains(t, string(pt["outputSchema"]), "anyOf", "output schema of %s widened", dt["name"])
			delete(pt, "outputSchema")
			dt = maps.Clone(dt)
			delete(dt, "outputSchema")
		}
		d, _ := json.Marshal(dt)
		p, _ := json.Marshal(pt)
		assert.JSONEq(t, string(d), string(p), "tool %s", dt["name"])
	}
	assert.JSONEq(t, `"lro_extract"`, string(ptl.Tools[len(dtl.Tools)]["name"]))
}

func withoutProgress(t *testing.T, raw json.RawMessage) json.RawMessage {
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	delete(m, "_progress")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// TestStdioProxyKilled: a proxy killed with SIGKILL leaves no server.
func TestStdioProxyKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel ends the server with the proxy on Linux only")
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	proxy := exec.Command(proxyBin, "--", "sh", "-c", fmt.Sprintf(`echo $$ > %q; exec sleep 600`, pidfile))
	stdin, err := proxy.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	proxy.Stdout = io.Discard
	proxy.Stderr = os.Stderr
	require.NoError(t, proxy.Start())
	pid := readPid(t, pidfile)
	require.True(t, alive(pid))
	require.NoError(t, proxy.Process.Kill())
	_ = proxy.Wait()
	requireEnded(t, pid, "after the proxy was killed")
}

// TestStdioServerExits: a server that exits makes the waiting calls fail
// with an error that says so, and the proxy exit with status 1 and the
// reason.
func TestStdioServerExits(t *testing.T) {
	proxy := exec.Command(proxyBin, "--", "sh", "-c", `read line; echo "dying" >&2; exit 3`)
	stdin, err := proxy.StdinPipe() // open until the test ends: the client stays
	require.NoError(t, err)
	defer stdin.Close()
	var stdout, stderr strings.Builder
	proxy.Stdout, proxy.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	require.NoError(t, proxy.Start())
	_, err = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	require.NoError(t, err)
	go func() { done <- proxy.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		assert.Equal(t, 1, exit.ExitCode())
	case <-time.After(20 * time.Second):
		proxy.Process.Kill()
		t.Fatal("the proxy did not exit after its server did")
	}
	assert.Contains(t, stderr.String(), "exit status 3")
	assert.Contains(t, stderr.String(), "dying")
	assert.Contains(t, stdout.String(), `"id":1`)
	assert.Contains(t, stdout.String(), "exited before answering initialize")
}

// TestReadmeMCPServersEntry: the README's mcpServers entry is valid JSON
// whose command runs: lro-proxy, then after -- the server's npx line, run
// here with the same package as npm installed it.
func TestReadmeMCPServersEntry(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "```json\n{\n  \"mcpServers\"")
	require.GreaterOrEqual(t, start, 0, "the README's mcpServers entry")
	block := text[start+len("```json\n"):]
	block = block[:strings.Index(block, "```")]
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal([]byte(block), &cfg))
	entry := cfg.MCPServers["filesystem"]
	require.Equal(t, "lro-proxy", entry.Command)
	require.Equal(t, []string{"--", "npx", "-y", "@modelcontextprotocol/server-filesystem"}, entry.Args[:4])
	assert.Contains(t, text, "claude mcp add filesystem -- lro-proxy -- npx -y @modelcontextprotocol/server-filesystem")

	ts := e2e.TSClient(t)
	fsBin := e2e.NodeBin(t, "mcp-server-filesystem")
	root := fsTree(t, 2, 2, 10)
	args := append([]string{"--", fsBin}, root) // npx -y PACKAGE DIR, with the installed package
	res := ts.RunStdio(t, "readme", proxyBin, args, []string{"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + t.TempDir()}, []e2e.Step{
		e2e.CallTool("list_allowed_directories", nil),
	})
	assert.Contains(t, decodeTool(t, res[0]).Content[0].Text, root)
}

// TestStdioMCPGoClient: mcp-go's client, which speaks 2026-07-28 first,
// through the proxy in front of the reference filesystem server, which
// speaks an older protocol.
func TestStdioMCPGoClient(t *testing.T) {
	fsBin := e2e.NodeBin(t, "mcp-server-filesystem")
	root := fsTree(t, 2, 2, 10)
	c, err := mcpclient.NewStdioMCPClient(proxyBin, []string{"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + t.TempDir()}, "--", fsBin, root)
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "mcp-go", Version: "1"}
	_, err = c.Initialize(ctx, init)
	require.NoError(t, err)
	tools, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	require.NoError(t, err)
	assert.NotEmpty(t, tools.Tools)
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "read_text_file"
	req.Params.Arguments = map[string]any{"path": filepath.Join(root, "small.txt")}
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	assert.Contains(t, res.Content[0].(mcpgo.TextContent).Text, "hello from a small file")
}

// TestStdioFiftyThousandRows: the official TypeScript client cannot take
// a 50,000-row result from a server directly (one message over its 10 MiB
// cap), and through the proxy it gets the descriptor (README says so).
func TestStdioFiftyThousandRows(t *testing.T) {
	ts := e2e.TSClient(t)
	env := []string{fakeServerEnv + "=1", "ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + t.TempDir()}
	steps := []e2e.Step{e2e.CallTool("small", nil), e2e.CallTool("rows", nil)}
	direct := ts.RunStdio(t, "direct", os.Args[0], nil, env, steps)
	require.True(t, direct[0].OK, direct[0].Error)
	// The SDK's read buffer throws ("ReadBuffer exceeded maximum size"),
	// and the client closes the connection.
	require.False(t, direct[1].OK, "the TypeScript client took %d bytes", len(direct[1].Result))
	assert.Contains(t, direct[1].Error, "Connection closed")
	proxied := ts.RunStdio(t, "through-proxy", proxyBin, []string{"--", os.Args[0]}, env, steps)
	require.True(t, proxied[0].OK, proxied[0].Error)
	d := stdioDescriptor(t, proxied[1])
	assert.Equal(t, float64(50_000), d["summary"].(map[string]any)["count"])
}
