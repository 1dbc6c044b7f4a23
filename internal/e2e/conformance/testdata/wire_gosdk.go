// This file is laid over the official Go SDK's conformance server
// (conformance/everything-server) by the harness's go build -overlay: it is
// lro's wiring as README shows it, called once the server is built.

package main

import (
	"log"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func lroWire(s *mcp.Server) {
	off, err := lro.New(lro.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	// The process ends with the server; Close would only remove files.
	gosdk.Install(s, off)
	gosdk.AddExtractTool(s, off)
}
