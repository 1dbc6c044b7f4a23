package memserver

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewOfficial returns a server on the official Go SDK with the same tools
// as [New]; the SDK has no tasks, so every call runs at once. Results go
// through off's middleware; off may be nil to serve without offloading.
// Give off the options of [Policies], or only the specification's tools
// are offloaded.
func NewOfficial(store *memstore.Store, off *lro.Offloader) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: Version}, nil)
	s.AddReceivingMiddleware(nullArguments)
	if off != nil {
		gosdk.Install(s, off)
	}
	t := tools{store: store}
	for _, tl := range catalog {
		s.AddTool(&mcp.Tool{Name: tl.name, Description: tl.description, InputSchema: tl.schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return errorResult("arguments must be a JSON object"), nil
				}
			}
			out := tl.run(t, ctx, args)
			switch {
			case out.err != nil:
				return errorResult(out.err.Error()), nil
			case out.json != nil:
				b, err := json.Marshal(out.json)
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.text}}}, nil
		})
	}
	addTypedOfficial(s, t, exportTool)
	return s
}

// addTypedOfficial registers a typed tool with [mcp.AddTool]: the SDK
// infers the output schema from Out, checks each output against it and
// sends it as the structured content. The text is set here: the SDK would
// encode the output checked, through a map, with its keys sorted, where
// this keeps the order of Out's fields (a memory's id first), byte for
// byte the text of mcp-go's structured handler.
func addTypedOfficial[Out any](s *mcp.Server, t tools, tl typedTool[Out]) {
	def := &mcp.Tool{Name: tl.name, Description: tl.description, InputSchema: tl.schema}
	mcp.AddTool(s, def, func(ctx context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, Out, error) {
		out, err := tl.run(t, ctx, args)
		if err != nil {
			return nil, out, err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, out, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, out, nil
	})
}

// nullArguments is receiving middleware that reads "arguments": null in a
// tools/call as no arguments: the SDK's typed tools (v1.8.0) apply the
// defaults of the input schema to a nil map then, and the server panics.
func nullArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil && string(bytes.TrimSpace(r.Params.Arguments)) == "null" {
			r.Params.Arguments = nil
		}
		return next(ctx, method, req)
	}
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
