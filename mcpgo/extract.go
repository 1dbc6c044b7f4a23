package mcpgo

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/admit"
)

// AddExtractTool registers the lro_extract tool on s: the model queries an
// offloaded file with jq through MCP, without a shell. From then on the
// descriptors' guidance points to lro_extract (the specification's native
// guidance); jq_recipes stay for clients with a shell.
//
// The tool reads only files this Offloader wrote, runs queries with gojq
// in worker processes that are killed at their deadline and have a memory
// limit (see [lro.ExtractLimits] for where queries run and what each
// place guarantees), and caps its own results at the threshold instead of
// offloading them.
func AddExtractTool(s *server.MCPServer, off *lro.Offloader) {
	def := off.Host().ExtractToolDefinition()
	tool := mcp.NewToolWithRawSchema(def.Name, def.Description, def.InputSchema)
	if def.Meta != nil {
		tool.Meta = &mcp.Meta{AdditionalFields: def.Meta}
	}
	tool.Annotations = mcp.ToolAnnotation{
		Title:           "Query an offloaded result",
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	}
	s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := off.Extract(withProgress(withSession(ctx), req.Params.Meta), req.GetArguments())
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(text), nil
	})
}

// withSession names the request's MCP session in ctx, for the admission
// of lro_extract calls and resource reads (see internal/admit), which is
// fair between sessions. A request of protocol 2026-07-28 over HTTP has a
// session of its own, without an id: its client, as it names itself in
// _meta, stands for its session (a client that takes another's name
// shares its turn).
func withSession(ctx context.Context) context.Context {
	if cs := server.ClientSessionFromContext(ctx); cs != nil && cs.SessionID() != "" {
		return admit.WithSession(ctx, cs.SessionID())
	}
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil {
		return admit.WithSession(ctx, "client:"+info.ClientInfo.Name+"/"+info.ClientInfo.Version)
	}
	return ctx
}

// withProgress sets in ctx the sender of the request's progress
// notifications, when its client sent a progress token.
func withProgress(ctx context.Context, meta *mcp.Meta) context.Context {
	s := server.ServerFromContext(ctx)
	if meta == nil || meta.ProgressToken == nil || s == nil {
		return ctx
	}
	token := meta.ProgressToken
	return host.WithProgress(ctx, func(ctx context.Context, progress, total float64, message string) {
		params := map[string]any{"progressToken": token, "progress": progress, "message": message}
		if total > 0 {
			params["total"] = total
		}
		_ = s.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params)
	})
}
