package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serverBin is the memoryserver command, built once for all tests.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "memoryserver-e2e-")
	if err != nil {
		panic(err)
	}
	serverBin = filepath.Join(dir, "memoryserver")
	if out, err := exec.Command("go", "build", "-o", serverBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building memoryserver: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// serverCmd returns the server command writing its files to outDir.
func serverCmd(outDir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(serverBin, args...)
	cmd.Env = append(os.Environ(), append([]string{"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + outDir}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

func sdkClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "e2e-go-sdk", Version: "1"}, nil)
}

func callSDK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

func sdkDescriptor(t *testing.T, res *mcp.CallToolResult) lro.OffloadResponse {
	t.Helper()
	require.False(t, res.IsError)
	require.Len(t, res.Content, 2, "the descriptor and the resource link to its file")
	text := res.Content[0].(*mcp.TextContent).Text
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(text), &d), "%.200s", text)
	require.True(t, d.Offloaded)
	link, ok := res.Content[1].(*mcp.ResourceLink)
	require.True(t, ok, "%T", res.Content[1])
	require.Equal(t, "lro://files/"+filepath.Base(d.FilePath), link.URI)
	return d
}

// checkFile checks an offloaded file: in outDir, a header and count lines.
func checkFile(t *testing.T, d lro.OffloadResponse, outDir string, count int) {
	t.Helper()
	assert.Equal(t, outDir, filepath.Dir(d.FilePath))
	f, err := os.Open(d.FilePath)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, count+1, n, "header plus one line per record")
}

// sdks are the values of -sdk: every end-to-end test runs on both.
var sdks = []string{"mcp-go", "official"}

func TestStdioWithOfficialSDK(t *testing.T) {
	for _, sdk := range sdks {
		for _, version := range []string{"", "2025-11-25"} {
			t.Run("server="+sdk+"/protocol="+version, func(t *testing.T) { testStdioWithOfficialSDK(t, sdk, version) })
		}
	}
}

func testStdioWithOfficialSDK(t *testing.T, sdk, version string) {
	out := t.TempDir()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := sdkClient().Connect(context.Background(), &mcp.CommandTransport{Command: serverCmd(out, nil, "-sdk", sdk)}, opts)
	require.NoError(t, err)
	defer cs.Close()

	res, err := callSDK(t, cs, "recall_memories", map[string]any{"query": "deployment", "limit": 5})
	require.NoError(t, err)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, `"results":[`, "below the threshold: inline")

	for _, detail := range []string{"light", "medium", "full"} {
		res, err = callSDK(t, cs, "recall_memories", map[string]any{"query": "deployment", "limit": 200, "detail": detail})
		require.NoError(t, err)
		d := sdkDescriptor(t, res)
		assert.Equal(t, lro.Detail(detail), d.Summary.Detail)
		checkFile(t, d, out, 200)
	}
	res, err = callSDK(t, cs, "inject_context", map[string]any{"query": "deployment", "limit": 80, "token_budget": 200})
	require.NoError(t, err)
	checkFile(t, sdkDescriptor(t, res), out, 80)
	res, err = callSDK(t, cs, "list_memories", map[string]any{"limit": 10})
	require.NoError(t, err)
	checkFile(t, sdkDescriptor(t, res), out, 500)

	res, err = callSDK(t, cs, "recall_memories", map[string]any{"query": "x", "detail": "verbose"})
	require.NoError(t, err)
	assert.True(t, res.IsError)

	res, err = callSDK(t, cs, "recall_memories", map[string]any{"query": "deployment", "limit": 200})
	require.NoError(t, err)
	d := sdkDescriptor(t, res)
	assert.Contains(t, d.Guidance, "lro_extract(", "the server has lro_extract")
	res, err = callSDK(t, cs, "lro_extract", map[string]any{"file_path": d.FilePath, "recipe": 6})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, `"count":`)
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// startHTTP starts the server on streamable HTTP and waits until it listens.
func startHTTP(t *testing.T, out string, args ...string) string {
	return startHTTPLogging(t, os.Stderr, out, args...)
}

// startHTTPLogging is startHTTP with the server's log written to log.
func startHTTPLogging(t *testing.T, log io.Writer, out string, args ...string) string {
	addr := freeAddr(t)
	cmd := serverCmd(out, nil, append([]string{"-http", addr}, args...)...)
	cmd.Stderr = log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		require.True(t, time.Now().Before(deadline), "server did not listen: %v", err)
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStreamableHTTPWithOfficialSDK(t *testing.T) {
	for _, sdk := range sdks {
		t.Run("server="+sdk, func(t *testing.T) { testStreamableHTTPWithOfficialSDK(t, sdk) })
	}
}

func testStreamableHTTPWithOfficialSDK(t *testing.T, sdk string) {
	out := t.TempDir()
	url := startHTTP(t, out, "-sdk", sdk)
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol="+version, func(t *testing.T) {
			var opts *mcp.ClientSessionOptions
			if version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
			}
			cs, err := sdkClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, opts)
			require.NoError(t, err)
			defer cs.Close()
			res, err := callSDK(t, cs, "recall_memories", map[string]any{"query": "security", "limit": 200, "detail": "full"})
			require.NoError(t, err)
			checkFile(t, sdkDescriptor(t, res), out, 200)
		})
	}
}

func TestStdioWithMCPGoClient(t *testing.T) {
	for _, sdk := range sdks {
		t.Run("server="+sdk, func(t *testing.T) { testStdioWithMCPGoClient(t, sdk) })
	}
}

func testStdioWithMCPGoClient(t *testing.T, sdk string) {
	out := t.TempDir()
	c, err := mcpclient.NewStdioMCPClient(serverBin, []string{"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + out}, "-sdk", sdk)
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "e2e-mcp-go", Version: "1"}
	_, err = c.Initialize(ctx, init)
	require.NoError(t, err)
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "recall_memories"
	req.Params.Arguments = map[string]any{"query": "incident", "limit": 300, "detail": "medium"}
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].(mcpgo.TextContent).Text), &d))
	checkFile(t, d, out, 300)
}

func TestJanitorDeletesFileOfRunningServer(t *testing.T) {
	t.Parallel() // it mostly waits for the TTL
	out := t.TempDir()
	cs, err := sdkClient().Connect(context.Background(),
		&mcp.CommandTransport{Command: serverCmd(out, []string{"ATLATL_PROMPT__OFFLOAD__TTL_SECONDS=1"})}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := callSDK(t, cs, "recall_memories", map[string]any{"query": "cache", "limit": 100})
	require.NoError(t, err)
	d := sdkDescriptor(t, res)
	_, err = os.Stat(d.FilePath)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := os.Stat(d.FilePath)
		return os.IsNotExist(err)
	}, 15*time.Second, 50*time.Millisecond, "the janitor deletes the file after its TTL")
}

// TestHundredThousandMemories sends a result that no official client could
// receive inline (about 150 MB against the Go SDK's 16 MiB stdio frame): with
// offloading it arrives as a small descriptor and the file holds it all.
func TestHundredThousandMemories(t *testing.T) {
	testenv.SkipUnlessFull(t) // generates 100,000 memories; the other cases offload smaller sets
	out := t.TempDir()
	args := map[string]any{"query": "database failover", "limit": 100000, "detail": "full"}
	cs, err := sdkClient().Connect(context.Background(), &mcp.CommandTransport{Command: serverCmd(out, nil, "-corpus", "100000")}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := callSDK(t, cs, "recall_memories", args)
	require.NoError(t, err)
	d := sdkDescriptor(t, res)
	text := res.Content[0].(*mcp.TextContent).Text
	assert.Less(t, len(text), 8<<10, "the descriptor is small")
	assert.Equal(t, 100000, d.Summary.Count)
	checkFile(t, d, out, 100000)
	fi, err := os.Stat(d.FilePath)
	require.NoError(t, err)
	t.Logf("100,000 full memories: file %d bytes, descriptor %d bytes", fi.Size(), len(text))

	// The same call without offloading breaks the client's message limit.
	cs2, err := sdkClient().Connect(context.Background(),
		&mcp.CommandTransport{Command: serverCmd(out, []string{"ATLATL_PROMPT__OFFLOAD__ENABLED=false"}, "-corpus", "100000")}, nil)
	require.NoError(t, err)
	defer cs2.Close()
	_, err = callSDK(t, cs2, "recall_memories", args)
	require.Error(t, err, "inline, the result exceeds the 16 MiB frame")
	assert.True(t, strings.Contains(err.Error(), "maximum") || strings.Contains(err.Error(), "closed"), "%v", err)
}
