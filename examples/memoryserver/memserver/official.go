package memserver

import (
	"context"
	"encoding/json"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewOfficial returns a server on the official Go SDK with the same tools
// as [New]. Results go through off's middleware; off may be nil to serve
// without offloading.
func NewOfficial(store *memstore.Store, off *lro.Offloader) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: Version}, nil)
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
	return s
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
