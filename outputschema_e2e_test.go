package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/mcpgo"

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/e2e"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A typed tool, "report", declares the output schema mcp-go infers from
// report. Asked for 600 rows it is well over the default threshold; for 3,
// well under.

type reportRow struct {
	ID     int    `json:"id"`
	Actor  string `json:"actor"`
	Detail string `json:"detail"`
}

type report struct {
	Rows  []reportRow `json:"rows"`
	Total int         `json:"total"`
}

type reportArgs struct {
	N int `json:"n"`
}

func makeReport(n int) report {
	r := report{Rows: make([]reportRow, n), Total: n}
	for i := range r.Rows {
		r.Rows[i] = reportRow{ID: i, Actor: []string{"alice", "bob", "carol"}[i%3], Detail: fmt.Sprintf("request %d touched object %d", i, i*7)}
	}
	return r
}

var reportPolicy = lro.WithTool("report", lro.ToolPolicy{Generic: true})

// typedServer returns an mcp-go server with mcpgo.ServerOption(off) (and the
// server's output validation, when validate) and the typed tool, registered
// through off.WidenTool when widen.
func typedServer(t *testing.T, off *lro.Offloader, validate, widen bool) *server.MCPServer {
	t.Helper()
	opts := []server.ServerOption{mcpgo.ServerOption(off)}
	if validate {
		opts = append(opts, server.WithOutputSchemaValidation())
	}
	s := server.NewMCPServer("typed", "1", opts...)
	tool := mcpgomcp.NewTool("report", mcpgomcp.WithNumber("n"), mcpgomcp.WithOutputSchema[report]())
	if widen {
		tool = mcpgo.WidenTool(off, tool)
	}
	s.AddTool(tool, mcpgomcp.NewStructuredToolHandler(func(_ context.Context, _ mcpgomcp.CallToolRequest, a reportArgs) (report, error) {
		return makeReport(a.N), nil
	}))
	return s
}

// listedTools returns the tools/list result of s as it goes over the wire.
func listedTools(t *testing.T, s *server.MCPServer) string {
	t.Helper()
	resp := s.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	b, err := json.Marshal(resp)
	require.NoError(t, err)
	require.Contains(t, string(b), `"tools"`, "%s", b)
	return string(b)
}

// tsListedSchema returns the output schema of tool in a listTools result
// of the TypeScript client.
func tsListedSchema(t *testing.T, r e2e.StepResult, tool string) string {
	t.Helper()
	require.True(t, r.OK, r.Error)
	var res struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &res))
	for _, tl := range res.Tools {
		if tl.Name == tool {
			return string(tl.OutputSchema)
		}
	}
	t.Fatalf("tool %s not listed: %s", tool, r.Result)
	return ""
}

var typedSteps = []e2e.Step{
	e2e.ListTools(),
	e2e.CallTool("report", map[string]any{"n": 600}),
	e2e.CallTool("report", map[string]any{"n": 3}),
}

// The official TypeScript client validates structured content against the
// listed output schema: it accepts the descriptor of a typed mcp-go tool
// and its small result alike, because the listed schema is widened.
func TestOutputSchemaTypeScriptMCPGo(t *testing.T) {
	ts := e2e.TSClient(t)
	off := newOffloader(t, nil, reportPolicy)
	s := typedServer(t, off, false, false)
	got := ts.RunHTTP(t, serveHTTP(t, server.NewStreamableHTTPServer(s)), "outputschema-ts", typedSteps)

	schema := tsListedSchema(t, got[0], "report")
	assert.Contains(t, schema, `"anyOf"`)
	assert.Contains(t, schema, `"lro offload descriptor"`)
	assert.Equal(t, true, got[1].Structured(t)["offloaded"], "the large result is a descriptor")
	small := got[2].Structured(t)
	assert.NotContains(t, small, "offloaded")
	assert.Len(t, small["rows"], 3, "the small result is the tool's own")

	st := s.GetTool("report")
	assert.Equal(t, "object", st.Tool.OutputSchema.Type, "the server's own tool is unchanged")
	assert.Nil(t, st.Tool.RawOutputSchema)
}

// Without the tool filter of ServerOption (the middleware alone), the
// TypeScript client rejects the descriptor: what the widening is for.
func TestOutputSchemaTypeScriptRejectsUnwidened(t *testing.T) {
	ts := e2e.TSClient(t)
	off := newOffloader(t, nil, reportPolicy)
	s := server.NewMCPServer("typed", "1", server.WithToolHandlerMiddleware(mcpgo.Middleware(off)))
	s.AddTool(mcpgomcp.NewTool("report", mcpgomcp.WithNumber("n"), mcpgomcp.WithOutputSchema[report]()),
		mcpgomcp.NewStructuredToolHandler(func(_ context.Context, _ mcpgomcp.CallToolRequest, a reportArgs) (report, error) {
			return makeReport(a.N), nil
		}))
	got := ts.RunHTTP(t, serveHTTP(t, server.NewStreamableHTTPServer(s)), "outputschema-ts", typedSteps)
	assert.NotContains(t, tsListedSchema(t, got[0], "report"), "anyOf")
	require.False(t, got[1].OK)
	assert.Contains(t, got[1].Error, "Structured content does not match")
	got[2].Structured(t)
}

// mcp-go's own validation (server.WithOutputSchemaValidation) checks the
// registered tool's schema, not the listed one: a tool registered through
// WidenTool has its descriptor pass, one registered as it is has it turned
// into a validation error.
func TestOutputSchemaServerValidationMCPGo(t *testing.T) {
	t.Run("WidenTool", func(t *testing.T) {
		off := newOffloader(t, nil, reportPolicy)
		s := typedServer(t, off, true, true)
		c := connect(t, s)
		d := descriptor(t, callTool(t, c, "report", map[string]any{"n": 600}))
		assert.Equal(t, 600, d.Summary.Count)
		small := callTool(t, c, "report", map[string]any{"n": 3})
		require.False(t, small.IsError, textOf(t, small, 0))
		assert.False(t, isDescriptor(t, small))
		assert.Contains(t, textOf(t, small, 0), `"total":3`)

		listed := listedTools(t, s)
		assert.Equal(t, 1, strings.Count(listed, "lro offload descriptor"), "the filter does not widen a widened schema again: %s", listed)
	})
	t.Run("without WidenTool", func(t *testing.T) {
		off := newOffloader(t, nil, reportPolicy)
		s := typedServer(t, off, true, false)
		c := connect(t, s)
		res := callTool(t, c, "report", map[string]any{"n": 600})
		require.True(t, res.IsError, "the server rejects the descriptor it offloaded")
		assert.Contains(t, textOf(t, res, 0), "output schema validation failed")
		small := callTool(t, c, "report", map[string]any{"n": 3})
		assert.False(t, small.IsError, "results the tool's schema admits pass")
		assert.Contains(t, listedTools(t, s), "lro offload descriptor", "clients are still told the widened schema")
	})
}

// WidenTool leaves alone the tools whose schema must stay exact.
func TestWidenTool(t *testing.T) {
	typed := mcpgomcp.NewTool("report", mcpgomcp.WithOutputSchema[report]())
	off := newOffloader(t, nil, lro.WithTool("exact", lro.ToolPolicy{SkipOutputSchema: true}))

	w := mcpgo.WidenTool(off, typed)
	assert.Empty(t, w.OutputSchema.Type, "the typed schema is cleared: mcp.Tool refuses to marshal both")
	assert.Contains(t, string(w.RawOutputSchema), "lro offload descriptor", "widened without a policy: a tool wrapped with Wrap has none")
	_, err := json.Marshal(w)
	require.NoError(t, err)
	assert.Equal(t, "object", typed.OutputSchema.Type, "the tool given is unchanged")

	exact := mcpgomcp.NewTool("exact", mcpgomcp.WithOutputSchema[report]())
	assert.Equal(t, exact, mcpgo.WidenTool(off, exact), "SkipOutputSchema")
	plain := mcpgomcp.NewTool("plain")
	assert.Equal(t, plain, mcpgo.WidenTool(off, plain), "no output schema")
	disabled := newOffloader(t, func(c *lro.Config) { c.Enabled = lro.Bool(false) })
	assert.Equal(t, typed, mcpgo.WidenTool(disabled, typed), "offloading disabled")
}

// The official Go SDK client, which does not validate, gets the descriptor
// as the structured content of a typed mcp-go tool.
func TestOutputSchemaGoSDKClientMCPGo(t *testing.T) {
	off := newOffloader(t, nil, reportPolicy)
	url := serveHTTP(t, server.NewStreamableHTTPServer(typedServer(t, off, false, false)))
	c := mcp.NewClient(&mcp.Implementation{Name: "outputschema", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	schema, err := json.Marshal(tools.Tools[0].OutputSchema)
	require.NoError(t, err)
	assert.Contains(t, string(schema), `"anyOf"`)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "report", Arguments: map[string]any{"n": 600}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	sc, ok := res.StructuredContent.(map[string]any)
	require.True(t, ok, "%T", res.StructuredContent)
	assert.Equal(t, true, sc["offloaded"])
	assert.NotEmpty(t, sc["file_path"])

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "report", Arguments: map[string]any{"n": 3}})
	require.NoError(t, err)
	sc, ok = res.StructuredContent.(map[string]any)
	require.True(t, ok, "%T", res.StructuredContent)
	assert.EqualValues(t, 3, sc["total"])
}
