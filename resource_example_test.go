package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
)

// A server that registers the resource templates answers resources/read for
// the files it offloads: a client reads a file, or a range of its lines,
// without sharing the server's disk.
func ExampleOffloader_AddResources() {
	dir, _ := os.MkdirTemp("", "lro-example")
	defer os.RemoveAll(dir)
	cfg := lro.DefaultConfig()
	cfg.OutputDir = dir
	cfg.ThresholdTokens = 10
	off, _ := lro.New(cfg, lro.WithoutJanitor())
	defer off.Close()

	s := server.NewMCPServer("tickets", "1.0.0")
	off.AddResources(s) // resources/read answers lro://files/...

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
