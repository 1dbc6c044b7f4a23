// This file is laid over mcp-go's conformance server (examples/conformance)
// by the harness's go build -overlay: it is lro's wiring as README shows it
// for a server whose constructor is not ours, applied to the built server.

package main

import (
	"log"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/mcpgo"
)

func lroWire(s *server.MCPServer) {
	off, err := lro.New(lro.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	// The process ends with the server; Close would only remove files.
	mcpgo.ServerOption(off)(s)
	mcpgo.AddExtractTool(s, off)
}
