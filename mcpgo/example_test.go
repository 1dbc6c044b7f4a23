package mcpgo_test

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
	"github.com/mcplro/lro/mcpgo"
)

// memories returns n small MIF memories.
func memories(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"id":"m%d","title":"Memory number %d","namespace":"_semantic/ex%d","memory_type":"semantic"}`, i, i, i%3))
	}
	return out
}

// A server adds offloading with one option; the specification's memory
// tools have their policies built in, and lro_extract is one line more.
func Example() {
	off, err := lro.New(lro.DefaultConfig(), lro.WithFS(lrotest.NewMemFS("/tmp/lro")))
	if err != nil {
		panic(err)
	}
	defer off.Close()
	s := server.NewMCPServer("memory", "1.0.0", mcpgo.ServerOption(off))
	s.AddTool(mcp.NewTool("list_memories"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultJSON(memories(300))
	})
	mcpgo.AddExtractTool(s, off) // optional: lro_extract, for models without a shell

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
	fmt.Println(strings.Contains(d.Guidance, "lro_extract"))
	// Output:
	// true list 300 /tmp/lro
	// true
}

// A server built by a constructor you do not own (a library's
// NewServer) gets offloading after the fact: a server.ServerOption is a
// func(*server.MCPServer), and everything it installs (the tool
// middleware, the tool filter that widens output schemas, the lro://files/
// resources and the hooks that detect proxy clients) may be added to a
// built server, before it serves. Nothing needs the constructor; only a
// later server.WithHooks would replace the hooks it adds.
func ExampleServerOption_builtServer() {
	off, err := lro.New(lro.DefaultConfig(), lro.WithFS(lrotest.NewMemFS("/tmp/lro")), lro.WithTool("search_files", lro.ToolPolicy{Generic: true}))
	if err != nil {
		panic(err)
	}
	defer off.Close()
	s := newFilesServer() // someone else's constructor, tools registered

	mcpgo.ServerOption(off)(s) // attach

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
		return mcp.NewToolResultJSON(memories(300))
	})
	return s
}

// A server that registers the resource templates answers resources/read for
// the files it offloads: a client reads a file, or a range of its lines,
// without sharing the server's disk.
func ExampleAddResources() {
	dir, _ := os.MkdirTemp("", "lro-example")
	defer os.RemoveAll(dir)
	cfg := lro.DefaultConfig()
	cfg.OutputDir = dir
	cfg.ThresholdTokens = 10
	off, _ := lro.New(cfg, lro.WithoutJanitor())
	defer off.Close()

	s := server.NewMCPServer("tickets", "1.0.0")
	mcpgo.AddResources(s, off) // resources/read answers lro://files/...

	out, _ := off.Offload(context.Background(), lro.ResultSet{
		Operation: "tickets",
		Generic:   true,
		Records:   []json.RawMessage{json.RawMessage(`{"id":1,"title":"cold cache"}`), json.RawMessage(`{"id":2,"title":"slow disk"}`)},
	})
	uri := "lro://files/" + filepath.Base(out.Response.FilePath) + "/lines/2-3"
	c, err := off.Host().ReadResource(context.Background(), uri)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(c.MIMEType, "\n", c.Text)
	// Output:
	// application/jsonl
	// {"id":1,"title":"cold cache"}
	// {"id":2,"title":"slow disk"}
}
