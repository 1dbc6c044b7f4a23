package proxy_test

import (
	"encoding/json"
	"testing"

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
