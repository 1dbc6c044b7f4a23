package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
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

// A server adds offloading with one option; the specification's memory
// tools have their policies built in.
func ExampleOffloader_ServerOption() {
	off, err := lro.New(lro.DefaultConfig(), lro.WithFS(lrotest.NewMemFS("/tmp/lro")))
	if err != nil {
		panic(err)
	}
	defer off.Close()
	s := server.NewMCPServer("memory", "1.0.0", off.ServerOption())
	s.AddTool(mcp.NewTool("list_memories"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultJSON(rows(300))
	})

	c, _ := client.NewInProcessClient(s)
	defer c.Close()
	_ = c.Start(context.Background())
	_, _ = c.Initialize(context.Background(), mcp.InitializeRequest{})
	req := mcp.CallToolRequest{}
	req.Params.Name = "list_memories"
	res, _ := c.CallTool(context.Background(), req)

	var d lro.OffloadResponse
	_ = json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &d)
	fmt.Println(d.Offloaded, d.Summary.Operation, d.Summary.Count, filepath.Dir(d.FilePath))
	// Output: true list 300 /tmp/lro
}

// A server built by a constructor you do not own (a library's
// NewServer) gets offloading after the fact: a server.ServerOption is a
// func(*server.MCPServer), and everything it installs (the tool
// middleware, the tool filter that widens output schemas, the lro://files/
// resources and the hooks that detect proxy clients) may be added to a
// built server, before it serves. Nothing needs the constructor; only a
// later server.WithHooks would replace the hooks it adds.
func ExampleOffloader_ServerOption_builtServer() {
	off, err := lro.New(lro.DefaultConfig(), lro.WithFS(lrotest.NewMemFS("/tmp/lro")), lro.WithTool("search_files", lro.ToolPolicy{Generic: true}))
	if err != nil {
		panic(err)
	}
	defer off.Close()
	s := newFilesServer() // someone else's constructor, tools registered

	off.ServerOption()(s) // attach

	c, _ := client.NewInProcessClient(s)
	defer c.Close()
	_ = c.Start(context.Background())
	_, _ = c.Initialize(context.Background(), mcp.InitializeRequest{})
	req := mcp.CallToolRequest{}
	req.Params.Name = "search_files"
	res, _ := c.CallTool(context.Background(), req)
	var d lro.OffloadResponse
	_ = json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &d)
	fmt.Println(d.Offloaded, d.Summary.Count)
	// Output: true 300
}

// newFilesServer stands for a constructor the user does not own.
func newFilesServer() *server.MCPServer {
	s := server.NewMCPServer("files", "1.0.0")
	s.AddTool(mcp.NewTool("search_files"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultJSON(rows(300))
	})
	return s
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
	h := off.Wrap(lro.ToolPolicy{Operation: "list"}, handler)
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
