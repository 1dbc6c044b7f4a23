// Package testmcp holds what the module's tests of mcp-go servers share:
// an in-process client, a tool call, the text of a result, and the lines
// of an offloaded file. It is test support, not part of the API.
package testmcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/stretchr/testify/require"
)

// Connect returns an initialized in-process client of s, closed when the
// test ends.
func Connect(t testing.TB, s *server.MCPServer, opts ...client.ClientOption) *client.Client {
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

// CallTool calls the tool name with args and returns its result.
func CallTool(t testing.TB, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	return res
}

// TextOf returns the text of content item i of res, which must be text.
func TextOf(t testing.TB, res *mcp.CallToolResult, i int) string {
	t.Helper()
	require.Greater(t, len(res.Content), i)
	tc, ok := res.Content[i].(mcp.TextContent)
	require.True(t, ok, "content %d is %T", i, res.Content[i])
	return tc.Text
}

// ReadFile returns the contents of the file at path.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// ReadJSONL returns the header and record lines of an offloaded file. The
// header must have no field the specification's OffloadHeader lacks.
func ReadJSONL(t testing.TB, data []byte) (lro.OffloadHeader, [][]byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	require.True(t, sc.Scan(), "file has a header line")
	var h lro.OffloadHeader
	dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&h))
	var lines [][]byte
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	require.NoError(t, sc.Err())
	return h, lines
}

// SyncBuffer is a bytes.Buffer that several goroutines may write and a
// test read at once: a log destination.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
