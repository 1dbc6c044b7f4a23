package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/mcplro/lro/mcpgo"
)

// rows returns n small JSON records.
func rows(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"id":"m%d","title":"Memory number %d","namespace":"_semantic/ex%d","memory_type":"semantic","tags":["demo"],"created":"2026-01-01T00:00:00Z","modified":"2026-01-01T00:00:00Z","status":"active"}`, i, i, i%3))
	}
	return out
}

func ExampleOffloader_Offload() {
	off, err := lro.New(lro.DefaultConfig(), lro.WithFS(lrotest.NewMemFS("/tmp/lro")))
	if err != nil {
		panic(err)
	}
	defer off.Close()

	for _, n := range []int{10, 200} {
		out, err := off.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: rows(n)})
		if err != nil {
			panic(err)
		}
		fmt.Println(n, "records:", out.Action, "~", out.Tokens, "tokens")
		if out.Action == lro.Offloaded {
			r := out.Response
			fmt.Println(r.Summary.Count, r.Summary.TopNamespaces, len(r.JQRecipes), "recipes")
			fmt.Println(r.JQRecipes[5].Description)
		}
	}
	// Output:
	// 10 records: inline ~ 480 tokens
	// 200 records: offloaded ~ 9745 tokens
	// 200 [_semantic/ex0 _semantic/ex1 _semantic/ex2] 10 recipes
	// Count by namespace
}

// A handler whose result is not the set to judge hands the set over with
// Collect, here a paginated tool that must not create a cursor when its
// whole set is offloaded.
func ExampleCollect() {
	off, _ := lro.New(lro.DefaultConfig(), lro.WithFS(lrotest.NewMemFS("/tmp/lro")))
	defer off.Close()
	all := rows(500)
	handler := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if lro.Collect(ctx, all, nil) {
			return mcp.NewToolResultText(""), nil // replaced by the descriptor
		}
		return mcp.NewToolResultJSON(map[string]any{"memories": all[:20], "next_cursor": "20"})
	}
	h := mcpgo.Wrap(off, lro.ToolPolicy{Operation: "list"}, handler)
	res, _ := h(context.Background(), mcp.CallToolRequest{})
	text := res.Content[0].(mcp.TextContent).Text
	fmt.Println(strings.Contains(text, `"offloaded":true`), strings.Contains(text, "next_cursor"))
	// Output: true false
}

func ExampleConfig_ApplyEnv() {
	os.Setenv("ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS", "3200")
	defer os.Unsetenv("ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS")
	cfg := lro.DefaultConfig()
	if err := cfg.ApplyEnv(""); err != nil {
		panic(err)
	}
	fmt.Println(cfg.ThresholdTokens)

	os.Setenv("ATLATL_PROMPT__OFFLOAD__TTL_SECONDS", "an hour")
	defer os.Unsetenv("ATLATL_PROMPT__OFFLOAD__TTL_SECONDS")
	fmt.Println(cfg.ApplyEnv(""))
	// Output:
	// 3200
	// lro: invalid ATLATL_PROMPT__OFFLOAD__TTL_SECONDS "an hour": want a whole number of seconds
}

func ExampleWithEstimator() {
	// Count one token per byte, for a deliberately pessimistic estimate.
	bytesAsTokens := lro.EstimatorFunc(func(p []byte) int { return len(p) })
	off, _ := lro.New(lro.DefaultConfig(), lro.WithEstimator(bytesAsTokens), lro.WithFS(lrotest.NewMemFS("/tmp/lro")))
	defer off.Close()
	out, _ := off.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: rows(10)})
	fmt.Println(out.Action, out.Tokens)
	// Output: offloaded 1910
}
