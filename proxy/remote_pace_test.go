package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxyReconnectsWhileAListingWaits: a listing the remote asked for
// waits for its turn (minResync after the last) without holding up a new
// connection's listing: a call that finds the connection lost reconnects
// and is answered at once. Before, the waiting listing held the syncs'
// lock, and a call after a lost connection waited for its turn: up to a
// second after every connection (each asks for one when its subscription
// takes effect), here an hour, and the call timed out.
func TestProxyReconnectsWhileAListingWaits(t *testing.T) {
	rem := startHostileTools(t, 3, 100)
	p, err := New(churnOffloader(t), Config{Remote: rem.http.URL, CallTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	c, err := client.NewInProcessClient(p.Server())
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { c.Close() })
	_, err = c.Initialize(context.Background(), mcp.InitializeRequest{})
	require.NoError(t, err)

	// A listing asked for, whose turn is an hour away.
	turn := time.Now().Add(time.Hour)
	p.pace.mu.Lock()
	p.pace.last = turn
	p.pace.mu.Unlock()
	p.requestResync()
	require.Eventually(t, func() bool {
		p.pace.mu.Lock()
		defer p.pace.mu.Unlock()
		return p.pace.last.After(turn) // reserved: it waits
	}, 10*time.Second, 5*time.Millisecond)

	p.mu.Lock()
	up := p.up
	p.mu.Unlock()
	p.drop(up)
	req := mcp.CallToolRequest{}
	req.Params.Name = "tool_0_0"
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	require.NotEmpty(t, res.Content)
	assert.False(t, res.IsError, "%v", res.Content[0])
}
