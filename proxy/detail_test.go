package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/proxy"
)

// ownDetailRemote is a memory server of its own shape, without lro: its
// recall_memories declares a detail argument of its own (["brief","full"]),
// its list_memories none. Each answers a call with limit above 10 with
// that many records of about 650 bytes, a smaller one with its arguments as it
// got them.
func ownDetailRemote(t *testing.T) string {
	s := server.NewMCPServer("own", "1", server.WithToolCapabilities(true))
	handler := func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		limit := req.GetInt("limit", 0)
		if limit <= 10 {
			b, _ := json.Marshal(req.GetArguments())
			return mcp.NewToolResultText(string(b)), nil
		}
		recs := make([]map[string]any, limit)
		for i := range recs {
			recs[i] = map[string]any{"id": fmt.Sprintf("m%d", i), "title": "t", "content": strings.Repeat("a memory of its own shape ", 23), "score": 0.5}
		}
		b, _ := json.Marshal(recs)
		return mcp.NewToolResultText(string(b)), nil
	}
	s.AddTool(mcp.NewToolWithRawSchema("recall_memories", "", json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer"},"detail":{"type":"string","enum":["brief","full"]}}}`)), handler)
	s.AddTool(mcp.NewToolWithRawSchema("list_memories", "", json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer"}}}`)), handler)
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestProxyToolsOwnDetail: through the proxy of a remote, a tool's own
// detail argument ("brief", which its input schema declares) reaches it
// as sent, its small answer inline and its large one offloaded; a tool
// that declares no detail still gets lro's error for it (issue 39, item 4).
func TestProxyToolsOwnDetail(t *testing.T) {
	p, _ := startProxy(t, ownDetailRemote(t), proxy.Config{})
	c := connect(t, p.Server())
	call := func(tool, args string) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = json.RawMessage(args)
		res, err := c.CallTool(context.Background(), req)
		require.NoError(t, err)
		return res
	}

	res := call("recall_memories", `{"limit":5,"detail":"brief"}`)
	assert.False(t, res.IsError, textOf(t, res, 0))
	assert.JSONEq(t, `{"limit":5,"detail":"brief"}`, textOf(t, res, 0), "the tool's own argument reaches it as sent, and its answer passes inline")

	d := descriptor(t, call("recall_memories", `{"limit":500,"detail":"brief"}`))
	_, lines := readJSONL(t, readFile(t, d.FilePath))
	assert.Len(t, lines, 500, "a large answer is offloaded whole")

	res = call("list_memories", `{"limit":5,"detail":"brief"}`)
	assert.True(t, res.IsError, "a tool that declares no detail: lro's level is read, and refused: %s", textOf(t, res, 0))
	assert.Contains(t, textOf(t, res, 0), `want "light", "medium" or "full"`)
}
