package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"
	"os"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/proxy"
)

// A proxy in front of a remote server whose get_logs tool returns 5,000
// log lines: the client of the proxy gets a descriptor of a file on this
// machine. (lro-proxy serves p.Server() on stdio instead.)
func Example() {
	// The remote: any streamable-HTTP MCP server.
	remote := server.NewMCPServer("logs", "1")
	remote.AddTool(mcp.NewTool("get_logs"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		logs := make([]map[string]any, 5000)
		for i := range logs {
			logs[i] = map[string]any{"seq": i, "msg": fmt.Sprintf("request %d served", i)}
		}
		return mcp.NewToolResultJSON(map[string]any{"logs": logs})
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(remote))
	defer srv.Close()

	dir, err := os.MkdirTemp("", "lro-proxy-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := lro.DefaultConfig()
	cfg.OutputDir = dir
	off, err := lro.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer off.Close()

	p, err := proxy.New(off, proxy.Config{Remote: srv.URL, Extract: true})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	// The proxy's client, here in process.
	c, err := client.NewInProcessClient(p.Server())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		log.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "get_logs"
	res, err := c.CallTool(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	var d lro.OffloadResponse
	if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &d); err != nil {
		log.Fatal(err)
	}
	fmt.Println("offloaded:", d.Offloaded, "records:", d.Summary.Count)
	_, err = os.Stat(d.FilePath)
	fmt.Println("file on this machine:", err == nil)
	// Output:
	// offloaded: true records: 5000
	// file on this machine: true
}
