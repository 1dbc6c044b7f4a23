package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkRemoteProxyProcess calls the example memory server on
// streamable HTTP directly (the official Go SDK's client, in this
// process) and through the lro-proxy process (-remote), in turn in one
// loop so that both see the same load: a small call (2 memories, inline)
// and 200 full memories (offloaded on the server's side directly, on the
// proxy's through it). With LRO_PROXY_BENCH_BASE, another proxy binary is
// called too, in the same loop: proxy/base says what this one's relay
// costs beside it.
//
//	LRO_PROXY_BENCH_BASE=/tmp/lro-proxy-base LRO_BENCH_DIR=/dev/shm go test -run '^$' -bench BenchmarkRemoteProxyProcess -benchtime 300x ./cmd/lro-proxy
func BenchmarkRemoteProxyProcess(b *testing.B) {
	rem := startRemoteOn(b, "mcp-go")
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: rem.url()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	for _, tc := range []struct {
		name, args, want string
	}{
		{"small", `{"query":"deployment","limit":2}`, `"results"`},
		{"offload200", `{"query":"deployment","limit":200,"detail":"full"}`, `offloaded`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			proxied := startLineClient(b, nil, proxyBin, "-remote", rem.url())
			var base *lineClient
			if bin := os.Getenv(baseProxyEnv); bin != "" {
				base = startLineClient(b, nil, bin, "-remote", rem.url())
			}
			params := `{"name":"recall_memories","arguments":` + tc.args + `}`
			if got := proxied.call(b, "tools/call", params); !strings.Contains(string(got), tc.want) {
				b.Fatalf("through the proxy: %.300s", got)
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
				b.Fatal(err)
			}
			var dt, pt, bt time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "recall_memories", Arguments: args}); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				proxied.call(b, "tools/call", params)
				t2 := time.Now()
				if base != nil {
					base.call(b, "tools/call", params)
				}
				dt += t1.Sub(t0)
				pt += t2.Sub(t1)
				bt += time.Since(t2)
			}
			n := float64(b.N)
			b.ReportMetric(float64(dt.Microseconds())/n, "direct-µs/call")
			b.ReportMetric(float64(pt.Microseconds())/n, "proxy-µs/call")
			b.ReportMetric(float64(pt)/float64(dt), "proxy/direct")
			if base != nil {
				b.ReportMetric(float64(bt.Microseconds())/n, "base-µs/call")
				b.ReportMetric(float64(pt)/float64(bt), "proxy/base")
			}
		})
	}
}
