package lro_test

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/structq/structqtest"
	"github.com/mcplro/lro/internal/testmcp"
)

// questionServer serves structqtest's tools, each result offloaded as
// generic records, and lro_extract.
func questionServer(t testing.TB, o *lro.Offloader) *server.MCPServer {
	s := server.NewMCPServer("servers", "1", o.ServerOption())
	for name, text := range structqtest.Tools() {
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(text), nil
		})
	}
	o.AddExtractTool(s)
	return s
}

// TestExtractQuestionsWithoutJQ asks lro_extract the questions of
// structqtest through mcp-go's client, of an orders table, a knowledge
// graph in two sections and nested log events, answered in worker
// processes, and compares each answer with the one computed in Go.
func TestExtractQuestionsWithoutJQ(t *testing.T) {
	for name, limits := range map[string]lro.Option{
		"workers":    fastExtract,
		"in process": lro.WithExtractLimits(lro.ExtractLimits{Timeout: 3 * time.Second, MaxHeapBytes: 256 << 20, InProcess: true}),
	} {
		t.Run(name, func(t *testing.T) {
			o := newOffloader(t, nil, limits, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
			c := testmcp.Connect(t, questionServer(t, o))
			structqtest.Run(t, func(t *testing.T, tool string, args map[string]any) (string, bool) {
				res := testmcp.CallTool(t, c, tool, args)
				return testmcp.TextOf(t, res, 0), res.IsError
			})
		})
	}
}
