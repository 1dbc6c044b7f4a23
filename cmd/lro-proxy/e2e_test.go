package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var proxyBin, serverBin string

func TestMain(m *testing.M) {
	if os.Getenv(nullRelayEnv) != "" {
		nullRelay() // the test binary as a relay that copies bytes (stdio_bench_test.go)
		os.Exit(0)
	}
	if os.Getenv(relayedServerEnv) != "" {
		relayedServer() // the test binary as a server of large prompts (relayed_e2e_test.go)
		os.Exit(0)
	}
	if os.Getenv(fakeServerEnv) != "" {
		fakeStdioServer() // the test binary as a stdio server (stdio_bench_test.go)
		os.Exit(0)
	}
	if os.Getenv(bigServerEnv) != "" {
		bigServer() // the test binary as a server of large messages (bigserver_test.go)
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "lro-proxy-e2e-")
	if err != nil {
		panic(err)
	}
	proxyBin, serverBin = filepath.Join(dir, "lro-proxy"), filepath.Join(dir, "memoryserver")
	// One go command for both: it loads their packages once and links
	// them at once.
	if out, err := exec.Command("go", "build", "-o", dir+string(filepath.Separator), ".", "../../examples/memoryserver").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building lro-proxy and memoryserver: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// remoteServer is the example memory server on streamable HTTP.
type remoteServer struct {
	t    testing.TB
	addr string
	dir  string
	sdk  string // the example server's -sdk
	cmd  *exec.Cmd
}

func (r *remoteServer) start() {
	r.cmd = exec.Command(serverBin, "-http", r.addr, "-sdk", r.sdk)
	r.cmd.Env = append(os.Environ(), "ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR="+r.dir)
	r.cmd.Stderr = os.Stderr
	require.NoError(r.t, r.cmd.Start())
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", r.addr)
		if err == nil {
			c.Close()
			return
		}
		require.True(r.t, time.Now().Before(deadline), "remote did not listen")
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *remoteServer) stop() {
	r.cmd.Process.Kill()
	r.cmd.Wait()
}

func startRemote(t *testing.T) *remoteServer { return startRemoteOn(t, "mcp-go") }

// startRemoteOn starts the example server on the given SDK.
func startRemoteOn(t testing.TB, sdk string) *remoteServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	r := &remoteServer{t: t, addr: addr, dir: t.TempDir(), sdk: sdk}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *remoteServer) url() string { return "http://" + r.addr + "/mcp" }

func proxyCmd(remote, dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(proxyBin, append([]string{"-remote", remote}, args...)...)
	cmd.Env = append(os.Environ(), "ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return res
}

func text(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

func descriptorOf(t *testing.T, res *mcp.CallToolResult) lro.OffloadResponse {
	t.Helper()
	require.False(t, res.IsError, text(res))
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(text(res)), &d), "%.300s", text(res))
	require.True(t, d.Offloaded)
	return d
}

func empty(t *testing.T, dir string) bool {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	return len(entries) == 0
}

// TestProxyEndToEnd: the memory server on streamable HTTP, on either SDK,
// the proxy as a stdio subprocess of the official Go SDK client, both
// protocol versions on each side.
func TestProxyEndToEnd(t *testing.T) {
	for _, sdk := range []string{"mcp-go", "official"} {
		t.Run("server="+sdk, func(t *testing.T) { testProxyEndToEnd(t, startRemoteOn(t, sdk)) })
	}
}

func testProxyEndToEnd(t *testing.T, rem *remoteServer) {
	for _, upstream := range []string{"", "2025-11-25"} {
		for _, downstream := range []string{"", "2025-11-25"} {
			t.Run(fmt.Sprintf("remote=%q client=%q", upstream, downstream), func(t *testing.T) {
				local := t.TempDir()
				var args []string
				if upstream != "" {
					args = append(args, "-protocol", upstream)
				}
				var opts *mcp.ClientSessionOptions
				if downstream != "" {
					opts = &mcp.ClientSessionOptions{ProtocolVersion: downstream}
				}
				c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
				cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: proxyCmd(rem.url(), local, args...)}, opts)
				require.NoError(t, err)
				defer cs.Close()

				d := descriptorOf(t, call(t, cs, "recall_memories", map[string]any{"query": "deployment", "limit": 200, "detail": "full"}))
				assert.Equal(t, local, filepath.Dir(d.FilePath), "offloaded into the proxy's directory")
				assert.Equal(t, 200, d.Summary.Count)
				assert.True(t, empty(t, rem.dir), "the server's directory stays empty")
				assert.Contains(t, d.Guidance, "lro_extract")

				res := call(t, cs, "lro_extract", map[string]any{"file_path": d.FilePath, "recipe": 6})
				assert.False(t, res.IsError, text(res))
				assert.Contains(t, text(res), `"count":`)

				small := call(t, cs, "recall_memories", map[string]any{"query": "deployment", "limit": 2})
				assert.Contains(t, text(small), `"results":[`, "small results pass through inline")
				// The remote sends the proxy its JSON once; the proxy's
				// client still gets both forms.
				for _, res := range []*mcp.CallToolResult{small, call(t, cs, "export_memories", map[string]any{"limit": 2})} {
					require.NotNil(t, res.StructuredContent, text(res))
					sc, err := json.Marshal(res.StructuredContent)
					require.NoError(t, err)
					assert.JSONEq(t, text(res), string(sc))
				}
			})
		}
	}

	// A direct client of the same server still gets offloading from it.
	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: rem.url()}, nil)
	require.NoError(t, err)
	defer cs.Close()
	d := descriptorOf(t, call(t, cs, "recall_memories", map[string]any{"query": "deployment", "limit": 200}))
	assert.Equal(t, rem.dir, filepath.Dir(d.FilePath))
}

// TestProxyWithMCPGoClientAndRemoteRestart uses mcp-go's stdio client, and
// stops and starts the remote in the middle.
func TestProxyWithMCPGoClientAndRemoteRestart(t *testing.T) {
	rem := startRemote(t)
	local := t.TempDir()
	c, err := mcpclient.NewStdioMCPClient(proxyBin, []string{"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + local}, "-remote", rem.url())
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	_, err = c.Initialize(ctx, mcpgo.InitializeRequest{})
	require.NoError(t, err)
	callGo := func(args map[string]any) *mcpgo.CallToolResult {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "recall_memories"
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		require.NoError(t, err, "the proxy answers with tool errors, never a broken connection")
		return res
	}
	big := map[string]any{"query": "security", "limit": 300, "detail": "medium"}
	res := callGo(big)
	require.False(t, res.IsError)
	assert.Contains(t, res.Content[0].(mcpgo.TextContent).Text, `"offloaded":true`)

	rem.stop()
	res = callGo(big)
	require.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(mcpgo.TextContent).Text, "unreachable")

	rem.start()
	require.Eventually(t, func() bool { return !callGo(big).IsError }, 20*time.Second, 100*time.Millisecond, "calls work again once the remote is back")
	assert.True(t, empty(t, rem.dir))
}

func TestProxyFlags(t *testing.T) {
	out, err := exec.Command(proxyBin).CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "give a server: -- COMMAND [ARGS...] (a local stdio server) or -remote URL")
	out, err = exec.Command(proxyBin, "-remote", "http://127.0.0.1:1/mcp", "--", "npx", "server").CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "both -remote http://127.0.0.1:1/mcp and a command (npx server): give one")
	out, err = exec.Command(proxyBin, "--", "lro-no-such-server-command").CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), `the server command "lro-no-such-server-command" cannot be run`)
	out, err = exec.Command(proxyBin, "-remote", "http://127.0.0.1:1/mcp", "-header-env", "Authorization=LRO_TEST_UNSET_VARIABLE").CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "LRO_TEST_UNSET_VARIABLE")
	out, _ = exec.Command(proxyBin, "-h").CombinedOutput()
	assert.Contains(t, string(out), "ATLATL_PROMPT__OFFLOAD__")
}

// TestProxyConfigMistakesExit: a configuration that cannot work stops the
// command within a second, with the reason and a non-zero status, while a
// remote that is merely down keeps it running and retrying.
func TestProxyConfigMistakesExit(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(server.NewMCPServer("s", "1")))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, tc := range []struct{ remote, want string }{
		{"ftp://x", `the scheme "ftp"`},
		{"memory.example.com/mcp", "has no scheme"},
		{srv.URL + "/wrong", "404 Not Found: is the path right?"},
	} {
		t.Run(tc.remote, func(t *testing.T) {
			cmd := proxyCmd(tc.remote, t.TempDir())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe() // kept open: only the mistake may stop it
			require.NoError(t, err)
			defer stdin.Close()
			start := time.Now()
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				testenv.Within(t, time.Since(start), time.Second, "the mistake stopped it")
				var exit *exec.ExitError
				require.ErrorAs(t, err, &exit)
				assert.NotZero(t, exit.ExitCode())
				assert.Contains(t, stderr.String(), tc.want)
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running after 5 s; stderr: %s", stderr.String())
			}
		})
	}

	// A remote that is down: the proxy serves and retries.
	cmd := proxyCmd("http://127.0.0.1:1/mcp", t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("exited (%v) although the remote may come up: %s", err, stderr.String())
	case <-time.After(time.Second):
	}
	stdin.Close() // the client goes away: a clean exit
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("did not exit when its client went away")
	}
	assert.Equal(t, 1, strings.Count(stderr.String(), "retrying"), stderr.String())
}

// TestProxyOffloadsEveryTool: lro-proxy offloads the large results of a
// remote tool that is not a memory tool (memory_graph) by default, and
// leaves them inline with -memory-tools-only, saying so in terms a proxy
// user can act on.
func TestProxyOffloadsEveryTool(t *testing.T) {
	rem := startRemote(t)
	connectProxy := func(t *testing.T, stderr *bytes.Buffer, args ...string) (*mcp.ClientSession, string) {
		local := t.TempDir()
		cmd := proxyCmd(rem.url(), local, args...)
		cmd.Stderr = stderr
		c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		return cs, local
	}
	graph := map[string]any{"limit": 300}

	var stderr bytes.Buffer
	cs, local := connectProxy(t, &stderr)
	d := descriptorOf(t, call(t, cs, "memory_graph", graph))
	assert.Equal(t, local, filepath.Dir(d.FilePath), "offloaded into the proxy's directory")
	assert.True(t, empty(t, rem.dir))

	var narrow bytes.Buffer
	cs, _ = connectProxy(t, &narrow, "-memory-tools-only")
	res := call(t, cs, "memory_graph", graph)
	require.False(t, res.IsError, text(res))
	assert.NotContains(t, text(res), `"offloaded"`, "inline with -memory-tools-only")
	assert.Contains(t, text(res), `"edges"`)
	assert.Contains(t, descriptorOf(t, call(t, cs, "recall_memories", map[string]any{"query": "deployment", "limit": 200})).FilePath, ".jsonl", "memory tools are still offloaded")
	cs.Close()
	assert.Contains(t, narrow.String(), "-memory-tools-only", "the warning names the flag")

	out, err := exec.Command(proxyBin, "-remote", rem.url(), "-offload-all", "-memory-tools-only").CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "contradict")
}
