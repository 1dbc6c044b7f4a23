package gosdk_test

import (
	"context"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/internal/structq/structqtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestExtractQuestionsWithoutJQ asks lro_extract structqtest's questions
// through the official SDK's client, over streamable HTTP, answered in
// worker processes, and compares each answer with the one computed in Go.
func TestExtractQuestionsWithoutJQ(t *testing.T) {
	off := newOffloader(t, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	s := mcp.NewServer(&mcp.Implementation{Name: "servers", Version: "1"}, nil)
	gosdk.Install(s, off)
	for name, body := range structqtest.Tools() {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: body}}}, nil
			})
	}
	gosdk.AddExtractTool(s, off)
	cs, _ := connectHTTP(t, s, "2026-07-28")
	structqtest.Run(t, func(t *testing.T, tool string, args map[string]any) (string, bool) {
		res := call(t, cs, tool, args)
		require.NotEmpty(t, res.Content)
		return text(res), res.IsError
	})
}
