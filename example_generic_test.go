package lro_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/mcplro/lro/mcpgo"
)

// A tool that does not return memories, here get_logs, is offloaded only
// once it has a policy: without one its result passes through, however
// large. Generic infers the line schema and the recipes from its records.
func ExampleWithTool() {
	getLogs := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		logs := make([]map[string]any, 500)
		for i := range logs {
			logs[i] = map[string]any{"level": []string{"INFO", "WARN"}[i%2], "message": fmt.Sprintf("request %d served", i)}
		}
		return mcp.NewToolResultJSON(map[string]any{"count": len(logs), "logs": logs})
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "get_logs"
	for _, policy := range [][]lro.Option{
		nil, // no policy: passes through
		{lro.WithTool("get_logs", lro.ToolPolicy{Generic: true})},
		// or every tool without a policy of its own:
		{lro.WithAnyTool(lro.ToolPolicy{Generic: true})},
	} {
		off, err := lro.New(lro.DefaultConfig(), append(policy, lro.WithFS(lrotest.NewMemFS("/tmp/lro")))...)
		if err != nil {
			panic(err)
		}
		res, _ := mcpgo.Middleware(off)(getLogs)(context.Background(), req)
		var d lro.OffloadResponse
		_ = json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &d)
		fmt.Println(d.Offloaded, d.Summary.Count, len(d.JQRecipes), "recipes")
		off.Close()
	}
	// Output:
	// false 0 0 recipes
	// true 500 10 recipes
	// true 500 10 recipes
}
