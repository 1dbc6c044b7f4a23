package lro_test

import (
	"context"
	"encoding/json"
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
	readJSONL = testmcp.ReadJSONL
	readFile  = testmcp.ReadFile
)

// memories returns n deterministic MIF memories serialized at detail d.
func memories(t testing.TB, n int, d lro.Detail) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, n)
	for i, m := range memstore.Generate(n, 42) {
		v, err := memstore.Project(&m, string(d))
		require.NoError(t, err)
		out[i], err = json.Marshal(v)
		require.NoError(t, err)
	}
	return out
}

// offloadMemories offloads n memories at full detail through o and
// returns the file's path.
func offloadMemories(t testing.TB, o *lro.Offloader, n int) string {
	t.Helper()
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: memories(t, n, lro.DetailFull)})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)
	return out.Response.FilePath
}

// newOffloader returns an Offloader over a fresh directory, closed when the
// test ends, whatever the environment of the test says.
func newOffloader(t testing.TB, mutate func(*lro.Config), opts ...lro.Option) *lro.Offloader {
	t.Helper()
	cfg := lro.DefaultConfig()
	cfg.OutputDir = t.TempDir()
	if mutate != nil {
		mutate(&cfg)
	}
	o, err := lro.New(cfg, append([]lro.Option{lro.WithoutEnv()}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { o.Close() })
	return o
}

// initClient starts and initializes c, closed when the benchmark ends.
func initClient(b *testing.B, c *client.Client) {
	b.Helper()
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(context.Background(), mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
}
