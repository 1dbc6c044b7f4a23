package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/benchdata"
	"github.com/mcplro/lro/mcpgo"
)

// recallResult builds what recall_memories returns for n memories at full
// detail: {query, count, results: [{score, memory}]} in text and
// structured content.
func recallResult(n int) (*mcp.CallToolResult, []byte) {
	payload := benchdata.Recall(n)
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(payload))}, StructuredContent: json.RawMessage(payload)}, payload
}

func recallRequest() mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = "recall_memories"
	req.Params.Arguments = map[string]any{"query": "q", "detail": "full"}
	return req
}

// allocPerPayload reports bytes allocated per byte of payload over the loop.
func allocPerPayload(b *testing.B, payload int, loop func()) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for b.Loop() {
		loop()
		n++
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n)/float64(payload), "alloc-B/payload-B")
}

// BenchmarkMiddlewareInline measures what the middleware adds to a small
// result: the same handler bare and wrapped.
//
//	LRO_BENCH_DIR=/dev/shm go test -run '^$' -bench Middleware -benchmem
func BenchmarkMiddlewareInline(b *testing.B) {
	res, payload := recallResult(3)
	handler := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, nil }
	req := recallRequest()
	o := newOffloader(b, nil, lro.WithoutJanitor())
	for name, h := range map[string]server.ToolHandlerFunc{
		"bare":    handler,
		"wrapped": mcpgo.Middleware(o)(handler),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				out, err := h(ctx, req)
				if err != nil || out != res {
					b.Fatal("not passed through", err)
				}
			}
		})
	}
}

// BenchmarkMiddlewareOffload measures the offload path for 200 and 10,000
// full memories against the engine's offload of the same memories
// (Offloader.Offload, records already in hand) and against a floor:
// estimating the same text with the library's estimator and writing it
// with os.WriteFile (benchdata.Floor).
func BenchmarkMiddlewareOffload(b *testing.B) {
	for _, n := range []int{200, 10000} {
		res, payload := recallResult(n)
		handler := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, nil }
		req := recallRequest()
		b.Run(fmt.Sprintf("memories=%d/lro", n), func(b *testing.B) {
			dir := benchDir(b)
			o := newOffloader(b, func(c *lro.Config) { c.OutputDir = dir }, lro.WithoutJanitor())
			h := mcpgo.Middleware(o)(handler)
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			allocPerPayload(b, len(payload), func() {
				out, err := h(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				// Only what the check needs: decoding the whole descriptor
				// would cost the comparison a tenth of the middleware's time,
				// where the engine's side reads out.Response as it is.
				var d struct {
					Offloaded bool   `json:"offloaded"`
					FilePath  string `json:"file_path"`
				}
				if err := json.Unmarshal([]byte(out.Content[0].(mcp.TextContent).Text), &d); err != nil || !d.Offloaded {
					b.Fatal("not offloaded", err)
				}
				if err := os.Remove(d.FilePath); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("memories=%d/engine", n), func(b *testing.B) {
			// The same memories and scores handed to Offload directly: the
			// middleware's target is at most 2.5 times this.
			var v struct {
				Results []struct {
					Score  float64         `json:"score"`
					Memory json.RawMessage `json:"memory"`
				} `json:"results"`
			}
			if err := json.Unmarshal(payload, &v); err != nil {
				b.Fatal(err)
			}
			set := lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Validated: true}
			for _, r := range v.Results {
				set.Records, set.Scores = append(set.Records, r.Memory), append(set.Scores, r.Score)
			}
			dir := benchDir(b)
			o := newOffloader(b, func(c *lro.Config) { c.OutputDir = dir }, lro.WithoutJanitor())
			b.SetBytes(int64(len(payload)))
			benchOffload(b, o, set)
		})
		b.Run(fmt.Sprintf("memories=%d/floor", n), func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			allocPerPayload(b, len(payload), benchdata.Floor(b, payload))
		})
	}
}
