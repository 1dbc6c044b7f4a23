package proxy_test

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/proxy"
)

// TestProxyExtractProgress: the proxy's lro_extract, a query past a
// second, sends notifications/progress to a client that sent a progress
// token. The query runs to its deadline (1.5 s): slow by construction.
func TestProxyExtractProgress(t *testing.T) {
	rem := startRemote(t)
	off := newOffloader(t, nil, lro.WithExtractLimits(lro.ExtractLimits{Timeout: 1500 * time.Millisecond}))
	p, err := proxy.New(off, proxy.Config{Remote: rem.http.URL, CallTimeout: 20 * time.Second, Extract: true})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	c := connect(t, p.Server())
	heard := hearProgress(c, nil)
	d := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 200, "detail": "full"}))

	req := mcp.CallToolRequest{}
	req.Params.Name = lro.ExtractToolName
	req.Params.Arguments = map[string]any{"file_path": d.FilePath, "query": "last(range(1e15))", "slurp": true}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-proxy"}
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	assert.Contains(t, textOf(t, res, 0), "took longer than")
	require.Eventually(t, func() bool { return len(heard.all()) > 0 }, time.Minute, 10*time.Millisecond)
	got := heard.all()
	assert.Equal(t, "tok-proxy", got[0]["progressToken"])
	assert.Equal(t, 1.5, got[0]["total"])
}
