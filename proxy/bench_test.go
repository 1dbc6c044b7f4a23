package proxy_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/benchdata"
	"github.com/mcplro/lro/proxy"
)

// BenchmarkProxy measures the latency the proxy adds to a call, for a
// small inline result and for one offloaded (200 full memories), against a
// direct streamable-HTTP call to the same remote in the same run (which
// offloads on the remote's side).
//
// For each size, direct and proxy time one route each; pair alternates the
// two routes in every iteration and reports each one's time and their
// ratio (proxy/direct), so that both see the same load on a shared
// machine. SetBytes is the size of the full result, as the remote sends
// it to the proxy.
//
//	go test -run '^$' -bench 'BenchmarkProxy$' -count 5
func BenchmarkProxy(b *testing.B) {
	rem := startRemoteB(b)
	direct, err := client.NewStreamableHttpClient(rem.http.URL)
	if err != nil {
		b.Fatal(err)
	}
	initClient(b, direct)
	asProxy := proxyClientB(b, rem.http.URL) // sees what the proxy gets
	off := newOffloader(b, func(c *lro.Config) { c.OutputDir = benchdata.Dir(b) })
	p, err := proxy.New(off, proxy.Config{Remote: rem.http.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	viaProxy, err := client.NewInProcessClient(p.Server())
	if err != nil {
		b.Fatal(err)
	}
	initClient(b, viaProxy)
	clean := func() {
		for _, dir := range []string{rem.off.Config().OutputDir, off.Config().OutputDir} {
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				os.Remove(dir + "/" + e.Name())
			}
		}
	}

	for _, size := range []struct {
		name      string
		args      map[string]any
		offloaded bool
	}{
		{"inline", map[string]any{"query": "cache", "limit": 2}, false},
		{"offloaded", map[string]any{"query": "cache", "limit": 200, "detail": "full"}, true},
	} {
		req := mcp.CallToolRequest{}
		req.Params.Name = "recall_memories"
		req.Params.Arguments = size.args
		call := func(b *testing.B, c *client.Client) {
			res, err := c.CallTool(context.Background(), req)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
			if got := len(res.Content) > 0 && benchDescriptor(res.Content[0]); got != size.offloaded {
				b.Fatalf("offloaded: %v, want %v", got, size.offloaded)
			}
		}
		full, err := asProxy.CallTool(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		raw, err := json.Marshal(full)
		if err != nil {
			b.Fatal(err)
		}
		for _, route := range []struct {
			name string
			c    *client.Client
		}{{"direct", direct}, {"proxy", viaProxy}} {
			b.Run(size.name+"/"+route.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					call(b, route.c)
				}
				b.StopTimer()
				clean()
			})
		}
		b.Run(size.name+"/pair", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			var d, q time.Duration
			for b.Loop() {
				t0 := time.Now()
				call(b, direct)
				t1 := time.Now()
				call(b, viaProxy)
				d, q = d+t1.Sub(t0), q+time.Since(t1)
			}
			b.StopTimer()
			b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "direct-ns/op")
			b.ReportMetric(float64(q.Nanoseconds())/float64(b.N), "proxy-ns/op")
			b.ReportMetric(float64(q)/float64(d), "proxy/direct")
			clean()
		})
	}
}

// proxyClientB returns a client of url that announces itself as an LRO
// proxy, so that the remote sends it full results.
func proxyClientB(b *testing.B, url string) *client.Client {
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(tr, client.WithClientCapabilities(mcp.ClientCapabilities{
		Experimental: map[string]any{host.ProxyCapability: map[string]any{}},
	}))
	initClient(b, c)
	return c
}

// benchDescriptor reports whether c is the text of an offload descriptor.
func benchDescriptor(c mcp.Content) bool {
	t, ok := c.(mcp.TextContent)
	if !ok {
		return false
	}
	var d struct {
		Offloaded bool `json:"offloaded"`
	}
	return json.Unmarshal([]byte(t.Text), &d) == nil && d.Offloaded
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
