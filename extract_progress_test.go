package lro_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
)

// TestExtractProgressMCPGo: on mcp-go, an lro_extract query that runs
// past a second sends notifications/progress to a client that sent a
// progress token, with that token and the query's deadline as the total.
// The query runs to its deadline (1.5 s): slow by construction.
func TestExtractProgressMCPGo(t *testing.T) {
	c, _ := extractServer(t, nil, lro.WithExtractLimits(lro.ExtractLimits{Timeout: 1500 * time.Millisecond}))
	var mu sync.Mutex
	var got []map[string]any
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != string(mcp.MethodNotificationProgress) {
			return
		}
		mu.Lock()
		got = append(got, n.Params.AdditionalFields)
		mu.Unlock()
	})
	d := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "", "limit": 100}))

	req := mcp.CallToolRequest{}
	req.Params.Name = lro.ExtractToolName
	req.Params.Arguments = map[string]any{"file_path": d.FilePath, "query": "last(range(1e15))", "slurp": true}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-2"}
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	assert.Contains(t, textOf(t, res, 0), "took longer than")
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 }, time.Minute, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for _, p := range got {
		assert.Equal(t, "tok-2", p["progressToken"])
		assert.GreaterOrEqual(t, p["progress"], 1.0)
		if total, ok := p["total"]; ok { // a report past the deadline has none
			assert.Equal(t, 1.5, total)
			assert.LessOrEqual(t, p["progress"], total)
		}
	}
	assert.Equal(t, 1.5, got[0]["total"], "the total is the query's deadline")
	t.Logf("progress trace: %d notifications; first %v", len(got), got[0])
}
