package proxy_test

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/mcplro/lro/internal/testmcp"
	"github.com/stretchr/testify/require"
)

// The shared helpers of the module's tests (internal/testmcp).
var (
	connect   = testmcp.Connect
	callTool  = testmcp.CallTool
	textOf    = testmcp.TextOf
	readFile  = testmcp.ReadFile
	readJSONL = testmcp.ReadJSONL
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

// descriptor returns the descriptor of an offloaded result.
func descriptor(t *testing.T, res *mcp.CallToolResult) lro.OffloadResponse {
	t.Helper()
	require.False(t, res.IsError, textOf(t, res, 0))
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(textOf(t, res, 0)), &d), textOf(t, res, 0)[:min(200, len(textOf(t, res, 0)))])
	require.True(t, d.Offloaded)
	return d
}

func isDescriptor(t *testing.T, res *mcp.CallToolResult) bool {
	var d map[string]any
	return len(res.Content) > 0 && json.Unmarshal([]byte(textOf(t, res, 0)), &d) == nil && d["offloaded"] == true
}

// progressHeard keeps the params of the progress notifications a client
// receives (see hearProgress).
type progressHeard struct {
	mu  sync.Mutex
	got []map[string]any
}

// hearProgress keeps the params of c's progress notifications, calling
// each (when not nil) as each one comes.
func hearProgress(c *client.Client, each func()) *progressHeard {
	h := &progressHeard{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != string(mcp.MethodNotificationProgress) {
			return
		}
		h.mu.Lock()
		h.got = append(h.got, n.Params.AdditionalFields)
		h.mu.Unlock()
		if each != nil {
			each()
		}
	})
	return h
}

// all returns the params heard so far.
func (h *progressHeard) all() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}
