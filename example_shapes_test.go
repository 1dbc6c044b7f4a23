package lro_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
)

// A result with several large fields, here a graph's nodes and edges, is
// written one file per field: the descriptor's file holds the largest, its
// sections list the others, and small fields stay in summary.extra.
func ExampleToolPolicy_sections() {
	memoryGraph := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		nodes := make([]map[string]any, 200)
		for i := range nodes {
			nodes[i] = map[string]any{"id": fmt.Sprintf("mem-%03d", i), "namespace": "_semantic"}
		}
		edges := make([]map[string]any, 600)
		for i := range edges {
			edges[i] = map[string]any{"from": fmt.Sprintf("mem-%03d", i%200), "to": fmt.Sprintf("mem-%03d", (i+1)%200)}
		}
		return mcp.NewToolResultJSON(map[string]any{"generated": "2026-11-23", "nodes": nodes, "edges": edges})
	}
	off, err := lro.New(lro.DefaultConfig(), lro.WithTool("memory_graph", lro.ToolPolicy{Generic: true}), lro.WithFS(lrotest.NewMemFS("/tmp/lro")))
	if err != nil {
		panic(err)
	}
	defer off.Close()

	req := mcp.CallToolRequest{}
	req.Params.Name = "memory_graph"
	res, _ := mcpgo.Middleware(off)(memoryGraph)(context.Background(), req)
	var d lro.OffloadResponse
	_ = json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &d)
	fmt.Println(d.Section, d.Summary.Count, string(d.Summary.Extra["generated"]))
	for _, s := range d.Sections {
		fmt.Println(s.Section, s.Count)
	}
	// Output:
	// edges 600 "2026-11-23"
	// nodes 200
}
