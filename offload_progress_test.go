package lro_test

import (
	"context"
	"sync"
	"testing"
	"time"

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
)

// TestOffloadProgress: a served call's offload reports progress to a
// client that sent a progress token, on both SDKs. The first report
// comes after a second (a 100,000-memory result); the test moves it to
// the start, so that any offload reports, with no bound in time.
func TestOffloadProgress(t *testing.T) {
	defer lro.SetOffloadProgressDelay(lro.SetOffloadProgressDelay(0))
	o := newOffloader(t, nil)
	args := map[string]any{"query": "", "limit": 200, "detail": "full"}

	t.Run("sdk=mcp-go", func(t *testing.T) {
		c := connect(t, memserver.New(testStore, o))
		var mu sync.Mutex
		var got []map[string]any
		c.OnNotification(func(n mcpgomcp.JSONRPCNotification) {
			if n.Method == string(mcpgomcp.MethodNotificationProgress) {
				mu.Lock()
				got = append(got, n.Params.AdditionalFields)
				mu.Unlock()
			}
		})
		req := mcpgomcp.CallToolRequest{}
		req.Params.Name = "recall_memories"
		req.Params.Arguments = args
		req.Params.Meta = &mcpgomcp.Meta{ProgressToken: "tok-off"}
		res, err := c.CallTool(context.Background(), req)
		require.NoError(t, err)
		descriptor(t, res)
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 }, time.Minute, 10*time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, "tok-off", got[0]["progressToken"])
		assert.Contains(t, got[0]["message"], "recall_memories")
	})

	t.Run("sdk=official", func(t *testing.T) {
		var mu sync.Mutex
		var got []*mcp.ProgressNotificationParams
		c := mcp.NewClient(&mcp.Implementation{Name: "progress", Version: "1"}, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				got = append(got, req.Params)
				mu.Unlock()
			},
		})
		st, ct := mcp.NewInMemoryTransports()
		ss, err := memserver.NewOfficial(testStore, o).Connect(context.Background(), st, nil)
		require.NoError(t, err)
		defer ss.Close()
		cs, err := c.Connect(context.Background(), ct, nil)
		require.NoError(t, err)
		defer cs.Close()
		params := &mcp.CallToolParams{Name: "recall_memories", Arguments: args}
		res, err := cs.CallTool(context.Background(), params)
		require.NoError(t, err)
		require.False(t, res.IsError)
		mu.Lock()
		assert.Empty(t, got, "no progress token, no notification")
		mu.Unlock()
		params.SetProgressToken("tok-off-2")
		_, err = cs.CallTool(context.Background(), params)
		require.NoError(t, err)
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 }, time.Minute, 10*time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, "tok-off-2", got[0].ProgressToken)
		assert.Contains(t, got[0].Message, "recall_memories")
	})
}
