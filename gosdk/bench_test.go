package gosdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/internal/benchdata"
	"github.com/mcplro/lro/mcpgo"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official SDK's path beside mcp-go's (see the root package's
// root package's middleware_bench_test.go, whose floors these repeat):
//
//	LRO_BENCH_DIR=/dev/shm go test -run '^$' -bench . -benchmem ./gosdk

// recallResult is what recall_memories returns for n full memories, text
// and structured content, as an official-SDK handler makes it.
func recallResult(n int) (*mcp.CallToolResult, []byte) {
	payload := benchdata.Recall(n)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(payload)}}, StructuredContent: json.RawMessage(payload)}, payload
}

// server answers tools/list with the tool and tools/call with res: the
// SDK's own dispatch, without a transport.
func server(res *mcp.CallToolResult) mcp.MethodHandler {
	list := &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "recall_memories"}}}
	return func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			return list, nil
		}
		return res, nil
	}
}

func recallRequest() *mcp.CallToolRequest {
	return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "recall_memories", Arguments: json.RawMessage(`{"query":"q","detail":"full"}`)}}
}

func benchOffloader(b *testing.B, dir string) *lro.Offloader {
	cfg := lro.DefaultConfig()
	cfg.OutputDir = dir
	off, err := lro.New(cfg, lro.WithoutJanitor())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { off.Close() })
	return off
}

// BenchmarkMiddlewareInline measures what the middleware adds to a small
// result: the same dispatch bare and wrapped; and, in the same run, what
// mcp-go's middleware adds to the same result (mcp-go/bare, mcp-go/wrapped,
// as the root package's benchmark of that name measures it), since the
// README compares the two. mcp-go hands the middleware its arguments
// decoded; the official SDK hands them as JSON, which this middleware
// decodes only as far as the members it reads.
func BenchmarkMiddlewareInline(b *testing.B) {
	res, payload := recallResult(3)
	req := recallRequest()
	off := benchOffloader(b, b.TempDir())
	for _, bc := range []struct {
		name string
		h    mcp.MethodHandler
	}{{"bare", server(res)}, {"wrapped", gosdk.Middleware(off)(server(res))}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				out, err := bc.h(context.Background(), "tools/call", req)
				if err != nil || out != res {
					b.Fatal("not passed through", err)
				}
			}
		})
	}

	mres := &mcpgomcp.CallToolResult{Content: []mcpgomcp.Content{mcpgomcp.NewTextContent(string(payload))}, StructuredContent: json.RawMessage(payload)}
	mreq := mcpgomcp.CallToolRequest{}
	mreq.Params.Name = "recall_memories"
	mreq.Params.Arguments = map[string]any{"query": "q", "detail": "full"}
	handler := func(context.Context, mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) { return mres, nil }
	wrapped := mcpgo.Middleware(off)(handler)
	for _, bc := range []struct {
		name string
		h    mcpserver.ToolHandlerFunc
	}{{"mcp-go/bare", handler}, {"mcp-go/wrapped", wrapped}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				out, err := bc.h(context.Background(), mreq)
				if err != nil || out != mres {
					b.Fatal("not passed through", err)
				}
			}
		})
	}

	// pair alternates batches of calls through both wrapped handlers and
	// reports the median time of a call through each, and their ratio:
	// the bare handlers take a few nanoseconds, so the wrapped times are
	// the middlewares' overheads, measured under the same load.
	b.Run("pair", func(b *testing.B) {
		const batch = 64
		sdk := gosdk.Middleware(off)(server(res))
		var t [2][]time.Duration
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			for range batch {
				if out, err := sdk(context.Background(), "tools/call", req); err != nil || out != res {
					b.Fatal("not passed through", err)
				}
			}
			t[0] = append(t[0], time.Since(start)/batch)
			start = time.Now()
			for range batch {
				if out, err := wrapped(context.Background(), mreq); err != nil || out != mres {
					b.Fatal("not passed through", err)
				}
			}
			t[1] = append(t[1], time.Since(start)/batch)
		}
		var med [2]float64
		for k := range t {
			slices.Sort(t[k])
			med[k] = float64(t[k][len(t[k])/2])
		}
		b.ReportMetric(med[0], "gosdk-ns/call")
		b.ReportMetric(med[1], "mcp-go-ns/call")
		b.ReportMetric(med[0]/med[1], "gosdk/mcp-go")
	})
}

// BenchmarkMiddlewareOffload measures the offload path for 200 and 10,000
// full memories against its floor: estimating the same text with the
// library's estimator and writing it with os.WriteFile (benchdata.Floor).
func BenchmarkMiddlewareOffload(b *testing.B) {
	for _, n := range []int{200, 10000} {
		res, payload := recallResult(n)
		req := recallRequest()
		b.Run(fmt.Sprintf("memories=%d/lro", n), func(b *testing.B) {
			h := gosdk.Middleware(benchOffloader(b, benchdata.Dir(b)))(server(res))
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				out, err := h(context.Background(), "tools/call", req)
				if err != nil {
					b.Fatal(err)
				}
				var d lro.OffloadResponse
				text := out.(*mcp.CallToolResult).Content[0].(*mcp.TextContent).Text
				if err := json.Unmarshal([]byte(text), &d); err != nil || !d.Offloaded {
					b.Fatal("not offloaded", err)
				}
				if err := os.Remove(d.FilePath); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("memories=%d/floor", n), func(b *testing.B) {
			floor := benchdata.Floor(b, payload)
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				floor()
			}
		})
	}
}
