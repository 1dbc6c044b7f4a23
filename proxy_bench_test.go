package lro_test

import (
	"context"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
)

// BenchmarkProxy measures the latency the proxy adds to a call, for a
// small inline result and for one offloaded (200 full memories), against a
// direct streamable-HTTP call to the same remote in the same run (which
// offloads on the remote's side).
//
//	go test -run '^$' -bench Proxy -benchmem
func BenchmarkProxy(b *testing.B) {
	rem := startRemoteB(b)
	direct, err := client.NewStreamableHttpClient(rem.http.URL)
	if err != nil {
		b.Fatal(err)
	}
	initClient(b, direct)
	off := newOffloader(b, nil)
	p, err := lro.NewProxy(off, lro.ProxyConfig{Remote: rem.http.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	viaProxy, err := client.NewInProcessClient(p.Server())
	if err != nil {
		b.Fatal(err)
	}
	initClient(b, viaProxy)

	for _, size := range []struct {
		name string
		args map[string]any
	}{
		{"inline", map[string]any{"query": "cache", "limit": 2}},
		{"offloaded", map[string]any{"query": "cache", "limit": 200, "detail": "full"}},
	} {
		for _, route := range []struct {
			name string
			c    *client.Client
		}{{"direct", direct}, {"proxy", viaProxy}} {
			b.Run(size.name+"/"+route.name, func(b *testing.B) {
				req := mcp.CallToolRequest{}
				req.Params.Name = "recall_memories"
				req.Params.Arguments = size.args
				b.ReportAllocs()
				for b.Loop() {
					res, err := route.c.CallTool(context.Background(), req)
					if err != nil || res.IsError {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				for _, dir := range []string{rem.off.Config().OutputDir, off.Config().OutputDir} {
					entries, _ := os.ReadDir(dir)
					for _, e := range entries {
						os.Remove(dir + "/" + e.Name())
					}
				}
			})
		}
	}
}

func initClient(b *testing.B, c *client.Client) {
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(context.Background(), mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
}
