// Package memserver is the example memory server: the specification's
// recall_memories, inject_context and list_memories tools over an
// in-memory store of MIF memories, with Large Result Offloading added by
// one line, on either Go SDK: mcp-go ([New]) or the official SDK
// ([NewOfficial]). The tools are written once (tools.go) and registered on
// each.
//
// It is a package, not only a command, so that the quickstart and the
// tests can run the very same server in process.
package memserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/memstore"
)

// Name and Version identify the server to clients.
const (
	Name    = "lro-memory"
	Version = "0.1.0"
)

// New returns an mcp-go server with the memory tools over store. Results
// go through off's middleware; off may be nil to serve without offloading.
// Extra server options are applied after the offloader's.
func New(store *memstore.Store, off *lro.Offloader, opts ...server.ServerOption) *server.MCPServer {
	var all []server.ServerOption
	all = append(all, server.WithToolCapabilities(true), server.WithRecovery())
	if off != nil {
		all = append(all, off.ServerOption())
	}
	s := server.NewMCPServer(Name, Version, append(all, opts...)...)
	t := tools{store: store}
	for _, tl := range catalog {
		s.AddTool(mcp.NewToolWithRawSchema(tl.name, tl.description, tl.schema), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			out := tl.run(t, ctx, req.GetArguments())
			switch {
			case out.err != nil:
				return mcp.NewToolResultError(out.err.Error()), nil
			case out.json != nil:
				return mcp.NewToolResultJSON(out.json)
			}
			return mcp.NewToolResultText(out.text), nil
		})
	}
	return s
}
