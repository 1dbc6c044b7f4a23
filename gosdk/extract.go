package gosdk

import (
	"context"
	"encoding/json"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddExtractTool registers lro_extract on s, as
// mcpgo.AddExtractTool does on an mcp-go server: the model
// queries an offloaded file with a recipe or a jq filter through MCP,
// without a shell, and the descriptors' guidance points to it.
func AddExtractTool(s *mcp.Server, off *lro.Offloader) {
	def := off.Host().ExtractToolDefinition()
	no := false
	tool := &mcp.Tool{
		Name:        def.Name,
		Description: def.Description,
		InputSchema: def.InputSchema,
		Meta:        def.Meta,
		Annotations: &mcp.ToolAnnotations{
			Title:           "Query an offloaded result",
			ReadOnlyHint:    true,
			DestructiveHint: &no,
			IdempotentHint:  true,
			OpenWorldHint:   &no,
		},
	}
	s.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		if req.Params != nil && len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return toolError(lro.ExtractToolName + ": arguments must be a JSON object"), nil
			}
		}
		text, err := off.Extract(withProgress(withSession(ctx, req.Session), req), args)
		if err != nil {
			return toolError(err.Error()), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// withProgress sets in ctx the sender of the request's progress
// notifications, when its client sent a progress token.
func withProgress(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req.Params == nil || req.Session == nil {
		return ctx
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return ctx
	}
	ss := req.Session
	return host.WithProgress(ctx, func(ctx context.Context, progress, total float64, message string) {
		_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: progress, Total: total, Message: message})
	})
}
