package lro_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/stretchr/testify/require"
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

// readJSONL returns the header and record lines of an offloaded file.
func readJSONL(t testing.TB, data []byte) (lro.OffloadHeader, [][]byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	require.True(t, sc.Scan(), "file has a header line")
	var h lro.OffloadHeader
	dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&h))
	var lines [][]byte
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	require.NoError(t, sc.Err())
	return h, lines
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
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
