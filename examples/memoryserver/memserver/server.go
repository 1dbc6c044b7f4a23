package memserver

import (
	"context"

	"github.com/mcplro/lro/mcpgo"

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

// New returns an mcp-go server with the memory tools over store, and the
// task capabilities (recall_memories may run as a task). Results go
// through off's middleware; off may be nil to serve without offloading.
// Give off the options of [Policies], or only the specification's tools
// are offloaded. Extra server options are applied after the offloader's.
func New(store *memstore.Store, off *lro.Offloader, opts ...server.ServerOption) *server.MCPServer {
	all := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithRecovery(),
		server.WithTaskCapabilities(true, true, true),
	}
	if off != nil {
		all = append(all, mcpgo.ServerOption(off))
	}
	s := server.NewMCPServer(Name, Version, append(all, opts...)...)
	t := tools{store: store}
	for _, tl := range catalog {
		def := mcp.NewToolWithRawSchema(tl.name, tl.description, tl.schema)
		if tl.task {
			def.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
		}
		s.AddTool(def, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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
	addTyped(s, t, exportTool)
	return s
}

// addTyped registers a typed tool the way mcp-go has for it: an output
// schema inferred from Out, and a structured handler whose value becomes
// the structured content and, encoded, the text.
func addTyped[Out any](s *server.MCPServer, t tools, tl typedTool[Out]) {
	def := mcp.NewToolWithRawSchema(tl.name, tl.description, tl.schema)
	mcp.WithOutputSchema[Out]()(&def)
	s.AddTool(def, mcp.NewStructuredToolHandler(func(ctx context.Context, _ mcp.CallToolRequest, args map[string]any) (Out, error) {
		return tl.run(t, ctx, args)
	}))
}
