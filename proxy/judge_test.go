package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/proxy"
)

// logsRemote is a remote with get_logs, a tool the proxy's Offloader has
// no policy for, which returns n log records and declares an output
// schema.
func logsRemote(t *testing.T) *remote {
	rem := startRemote(t)
	outSchema := json.RawMessage(`{"type":"object","properties":{"logs":{"type":"array","items":{"type":"object"}}},"required":["logs"]}`)
	tool := mcp.NewTool("get_logs", mcp.WithNumber("n"))
	tool.RawOutputSchema = outSchema
	rem.mcp.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := req.GetInt("n", 10)
		logs := make([]map[string]any, n)
		for i := range logs {
			logs[i] = map[string]any{"seq": i, "level": "info", "msg": fmt.Sprintf("request %d served in %d ms from the cache of the east region", i, i%97)}
		}
		return mcp.NewToolResultJSON(map[string]any{"logs": logs})
	})
	return rem
}

// TestProxyJudgesEveryTool: by default every remote tool's large results
// are offloaded, a tool the Offloader has no policy for as generic
// records, and its listed output schema admits the descriptor;
// MemoryToolsOnly leaves such a tool inline, its schema as the remote's.
func TestProxyJudgesEveryTool(t *testing.T) {
	rem := logsRemote(t)
	args := map[string]any{"n": 2000}

	p, off := startProxy(t, rem.http.URL, proxy.Config{})
	require.False(t, off.Host().HasPolicy("get_logs"), "the Offloader has no policy for it")
	c := connect(t, p.Server())
	res := callTool(t, c, "get_logs", args)
	d := descriptor(t, res)
	assert.Equal(t, 2000, d.Summary.Count)
	assert.Equal(t, off.Config().OutputDir, filepathDir(d.FilePath), "offloaded on the proxy's side")
	assert.True(t, dirEmpty(t, rem.off.Config().OutputDir))
	small := callTool(t, c, "get_logs", map[string]any{"n": 2})
	assert.False(t, isDescriptor(t, small), "small results stay inline")
	listed := listedOutputSchema(t, p, "get_logs")
	assert.Contains(t, listed, `"lro offload descriptor"`, "the schema admits the descriptor")
	assert.Contains(t, listed, `"logs"`, "and what the tool returns")

	p, _ = startProxy(t, rem.http.URL, proxy.Config{MemoryToolsOnly: true})
	c = connect(t, p.Server())
	res = callTool(t, c, "get_logs", args)
	assert.False(t, isDescriptor(t, res), "inline with MemoryToolsOnly")
	assert.Contains(t, textOf(t, res, 0), `"request 1999 served`)
	assert.JSONEq(t, `{"type":"object","properties":{"logs":{"type":"array","items":{"type":"object"}}},"required":["logs"]}`, listedOutputSchema(t, p, "get_logs"))
	assert.True(t, isDescriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 200})), "memory tools are still offloaded")
}

// listedOutputSchema returns the output schema of tool in the proxy's
// tools/list result, as sent (mcp-go's client would decode it into a
// struct that keeps no anyOf).
func listedOutputSchema(t *testing.T, p *proxy.Proxy, tool string) string {
	t.Helper()
	msg := p.Server().HandleMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	b, err := json.Marshal(msg)
	require.NoError(t, err)
	var res struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(b, &res), "%s", b)
	for _, tl := range res.Result.Tools {
		if tl.Name == tool {
			return string(tl.OutputSchema)
		}
	}
	t.Fatalf("%s is not listed: %s", tool, b)
	return ""
}
