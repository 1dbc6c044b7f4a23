package gosdk_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
)

// TestExtractProgress: an lro_extract query that runs past a second sends
// notifications/progress to a client that sent a progress token (none
// did), with the token, a growing progress and the query's deadline as
// the total; a client without a token gets none. The query runs to its
// deadline (1.5 s), so the call is slow by construction.
func TestExtractProgress(t *testing.T) {
	off := newOffloader(t, lro.WithTool("export", lro.ToolPolicy{Generic: true}),
		lro.WithExtractLimits(lro.ExtractLimits{Timeout: 1500 * time.Millisecond}))
	s := newServer(off)
	gosdk.AddExtractTool(s, off)

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
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := c.Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()

	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(text(call(t, cs, "export", nil))), &d))
	require.True(t, d.Offloaded)
	slow := map[string]any{"file_path": d.FilePath, "query": "last(range(1e15))", "slurp": true}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: lro.ExtractToolName, Arguments: slow})
	require.NoError(t, err)
	assert.Contains(t, text(res), "took longer than")
	mu.Lock()
	assert.Empty(t, got, "no progress token, no notification")
	mu.Unlock()

	params := &mcp.CallToolParams{Name: lro.ExtractToolName, Arguments: slow}
	params.SetProgressToken("tok-1")
	res, err = cs.CallTool(ctx, params)
	require.NoError(t, err)
	assert.Contains(t, text(res), "took longer than")
	// Notifications may trail the answer on the client's side.
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 }, time.Minute, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	prev := 0.0
	for _, p := range got {
		assert.Equal(t, "tok-1", p.ProgressToken)
		assert.Greater(t, p.Progress, prev, "progress grows")
		assert.GreaterOrEqual(t, p.Progress, 1.0, "the first report comes after a second")
		prev = p.Progress
		assert.Contains(t, p.Message, "lro_extract")
	}
	assert.Equal(t, 1.5, got[0].Total, "the total is the query's deadline")
	t.Logf("progress trace: %d notifications; first %+v", len(got), *got[0])
}
