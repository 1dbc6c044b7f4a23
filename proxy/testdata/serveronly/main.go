// Command serveronly is a server that offloads with lro and runs no
// proxy: TestRootLinksNoClient checks that it does not link mcp-go's
// client.
package main

import (
	"log"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/mcpgo"
)

func main() {
	off, err := lro.New(lro.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer off.Close()
	s := server.NewMCPServer("serveronly", "1", mcpgo.ServerOption(off))
	mcpgo.AddExtractTool(s, off)
	if err := server.ServeStdio(s); err != nil {
		log.Fatal(err)
	}
}
