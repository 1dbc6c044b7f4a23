package gosdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An ordinary tool of an official-SDK server, offloaded once its result
// passes the threshold.
func Example() {
	cfg := lro.DefaultConfig()
	cfg.OutputDir, _ = os.MkdirTemp("", "lro-example-")
	defer os.RemoveAll(cfg.OutputDir)
	off, err := lro.New(cfg, lro.WithTool("get_logs", lro.ToolPolicy{Generic: true}))
	if err != nil {
		log.Fatal(err)
	}
	defer off.Close()

	s := mcp.NewServer(&mcp.Implementation{Name: "logs", Version: "1.0.0"}, nil)
	gosdk.Install(s, off)
	gosdk.AddExtractTool(s, off)
	s.AddTool(&mcp.Tool{Name: "get_logs", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			logs := strings.Repeat("level=info msg=\"request served\"\n", 3000)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: logs}}}, nil
		})

	// A client in the same process.
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_logs"})
	if err != nil {
		log.Fatal(err)
	}
	var d lro.OffloadResponse
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &d); err != nil {
		log.Fatal(err)
	}
	fmt.Println("offloaded:", d.Offloaded, "lines:", d.Summary.Count)
	fmt.Println("guidance names lro_extract:", strings.Contains(d.Guidance, "lro_extract("))
	// Output:
	// offloaded: true lines: 3000
	// guidance names lro_extract: true
}
