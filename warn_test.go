package lro_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
)

// A tool without a policy passes through, but a result over the threshold
// is logged once for that tool, with the fix, never silently.
func TestToolWithoutPolicyIsLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	o := newOffloader(t, nil, lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	s := server.NewMCPServer("t", "1", mcpgo.ServerOption(o))
	big := strings.Repeat("level=info msg=served\n", 3000)
	for _, name := range []string{"get_logs", "get_small"} {
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if name == "get_small" {
				return mcp.NewToolResultText("ok"), nil
			}
			return mcp.NewToolResultText(big), nil
		})
	}
	c := connect(t, s)
	for range 3 {
		assert.Equal(t, big, textOf(t, callTool(t, c, "get_logs", nil), 0), "passed through")
		callTool(t, c, "get_small", nil)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "has no offload policy"), logs.String())
	assert.Contains(t, logs.String(), `lro.WithTool(\"get_logs\"`)
	assert.NotContains(t, logs.String(), "get_small")
}
