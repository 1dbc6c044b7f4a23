package e2e_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/internal/e2e"
)

// stdioServerEnv makes the test binary serve newServer over stdio instead
// of running the tests, so RunStdio has a server to start.
const stdioServerEnv = "LRO_E2E_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		if err := server.ServeStdio(newServer()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// newServer has a plain text tool that greets the client by the name it
// gave, a tool whose structured content breaks its own output schema, and
// one text resource.
func newServer() *server.MCPServer {
	s := server.NewMCPServer("e2e", "1.0.0")
	s.AddTool(mcp.NewTool("greet", mcp.WithDescription("Greets the client by name.")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("hello, " + clientName(ctx)), nil
		})
	s.AddTool(mcp.NewTool("count",
		mcp.WithDescription("Claims an integer count, returns a string."),
		mcp.WithRawOutputSchema(json.RawMessage(
			`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`)),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructured(map[string]any{"count": "many"}, `{"count":"many"}`), nil
	})
	s.AddResource(mcp.NewResource("test://note", "note", mcp.WithMIMEType("text/plain")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{
				URI: req.Params.URI, MIMEType: "text/plain", Text: "a note",
			}}, nil
		})
	return s
}

// clientName is the name the client gave: per request under protocol
// 2026-07-28, else at initialize.
func clientName(ctx context.Context) string {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil {
		return info.ClientInfo.Name
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientInfo().Name
	}
	return "?"
}

var plan = []e2e.Step{
	e2e.ListTools(),
	e2e.CallTool("greet", nil),
	e2e.CallTool("count", nil),
	e2e.ReadResource("test://note"),
	{Op: "noSuchOp"},
}

// checkPlan checks the results of plan for a client named name.
func checkPlan(t *testing.T, name string, res []e2e.StepResult) {
	t.Helper()

	require.True(t, res[0].OK, res[0].Error)
	var list mcp.ListToolsResult
	require.NoError(t, json.Unmarshal(res[0].Result, &list))
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	assert.ElementsMatch(t, []string{"greet", "count"}, names)

	require.True(t, res[1].OK, res[1].Error)
	var greet struct {
		Content []mcp.TextContent `json:"content"`
	}
	require.NoError(t, json.Unmarshal(res[1].Result, &greet))
	require.Len(t, greet.Content, 1)
	assert.Equal(t, "hello, "+name, greet.Content[0].Text)

	assert.False(t, res[2].OK, "count's result breaks its output schema: %s", res[2].Result)
	assert.Contains(t, res[2].Error, "Structured content does not match the tool's output schema")

	require.True(t, res[3].OK, res[3].Error)
	assert.Contains(t, string(res[3].Result), `"text":"a note"`)

	assert.False(t, res[4].OK)
	assert.Contains(t, res[4].Error, "unknown op")
}

func TestTSClientHTTP(t *testing.T) {
	ts := e2e.TSClient(t)
	srv := httptest.NewServer(server.NewStreamableHTTPServer(newServer()))
	defer srv.Close()

	checkPlan(t, "e2e-http", ts.RunHTTP(t, srv.URL+"/mcp", "e2e-http", plan))

	// A plan without listTools is validated too: the client lists first.
	res := ts.RunHTTP(t, srv.URL+"/mcp", "e2e-http", []e2e.Step{e2e.CallTool("count", nil)})
	assert.Contains(t, res[0].Error, "Structured content does not match the tool's output schema")
}

func TestTSClientStdio(t *testing.T) {
	ts := e2e.TSClient(t)
	exe, err := os.Executable()
	require.NoError(t, err)

	res := ts.RunStdio(t, "e2e-stdio", exe, nil, []string{stdioServerEnv + "=1"}, plan)
	checkPlan(t, "e2e-stdio", res)
}
