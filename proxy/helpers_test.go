package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/stretchr/testify/require"
)

var testStore = memstore.New(memstore.Generate(500, 7))

// newOffloader returns an Offloader over a fresh directory, closed when the
// test ends.
func newOffloader(t testing.TB, mutate func(*lro.Config), opts ...lro.Option) *lro.Offloader {
	t.Helper()
	cfg := lro.DefaultConfig()
	cfg.OutputDir = t.TempDir()
	if mutate != nil {
		mutate(&cfg)
	}
	o, err := lro.New(cfg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { o.Close() })
	return o
}

// connect returns an initialized in-process mcp-go client of s.
func connect(t *testing.T, s *server.MCPServer, opts ...client.ClientOption) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClientWithOptions(s, opts...)
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "lro-test", Version: "1"}
	_, err = c.Initialize(context.Background(), init)
	require.NoError(t, err)
	return c
}

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	return res
}

func textOf(t *testing.T, res *mcp.CallToolResult, i int) string {
	t.Helper()
	require.Greater(t, len(res.Content), i)
	tc, ok := res.Content[i].(mcp.TextContent)
	require.True(t, ok, "content %d is %T", i, res.Content[i])
	return tc.Text
}

// descriptor returns the descriptor of an offloaded result.
func descriptor(t *testing.T, res *mcp.CallToolResult) lro.OffloadResponse {
	t.Helper()
	require.False(t, res.IsError, textOf(t, res, 0))
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(textOf(t, res, 0)), &d), textOf(t, res, 0)[:min(200, len(textOf(t, res, 0)))])
	require.True(t, d.Offloaded)
	return d
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// readJSONL returns the header and record lines of an offloaded file.
func readJSONL(t testing.TB, data []byte) (lro.OffloadHeader, [][]byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	require.True(t, sc.Scan(), "file has a header line")
	var h lro.OffloadHeader
	require.NoError(t, json.Unmarshal(sc.Bytes(), &h))
	var lines [][]byte
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	require.NoError(t, sc.Err())
	return h, lines
}

func isDescriptor(t *testing.T, res *mcp.CallToolResult) bool {
	var d map[string]any
	return len(res.Content) > 0 && json.Unmarshal([]byte(textOf(t, res, 0)), &d) == nil && d["offloaded"] == true
}
