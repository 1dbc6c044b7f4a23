package gosdk_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/internal/e2e"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type reportArgs struct {
	N int `json:"n"`
}

// reportSchema is the declared schema of "raw_report", a tool added with
// (*mcp.Server).AddTool, which the server never validates against.
const reportSchema = `{"type":"object","properties":{"count":{"type":"integer"},"records":{"type":"array"}},"required":["count","records"],"additionalProperties":false}`

func makeExport(n int) exportResult {
	out := exportResult{Records: make([]record, n), Count: n}
	for i := range out.Records {
		out.Records[i] = record{ID: i, Title: "a record of the report, long enough to count"}
	}
	return out
}

// typedServer returns a server with the offload middleware and three tools
// that declare an output schema: "report", typed with mcp.AddTool (600 or
// n records); "strict", typed, whose explicit schema admits at most 1000
// records; and "raw_report", added with the tool returned, whose schema
// is reportSchema.
func typedServer(off *lro.Offloader) (*mcp.Server, *mcp.Tool) {
	s := mcp.NewServer(&mcp.Implementation{Name: "typed", Version: "1"}, nil)
	gosdk.Install(s, off)
	mcp.AddTool(s, &mcp.Tool{Name: "report"}, func(_ context.Context, _ *mcp.CallToolRequest, a reportArgs) (*mcp.CallToolResult, exportResult, error) {
		return nil, makeExport(a.N), nil
	})
	strict := json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"},"records":{"type":"array","maxItems":1000}},"required":["count","records"]}`)
	mcp.AddTool(s, &mcp.Tool{Name: "strict", OutputSchema: strict}, func(_ context.Context, _ *mcp.CallToolRequest, a reportArgs) (*mcp.CallToolResult, exportResult, error) {
		return nil, makeExport(a.N), nil
	})
	raw := &mcp.Tool{Name: "raw_report", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(reportSchema)}
	s.AddTool(raw, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, _ := json.Marshal(makeExport(600))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
	})
	return s, raw
}

var typedPolicies = []lro.Option{
	lro.WithTool("report", lro.ToolPolicy{Generic: true}),
	lro.WithTool("strict", lro.ToolPolicy{Generic: true}),
	lro.WithTool("raw_report", lro.ToolPolicy{Generic: true}),
}

// The official TypeScript client validates structured content against the
// listed output schema: it accepts the descriptor of a typed go-sdk tool
// and its small result alike, because the listed schema is widened.
func TestOutputSchemaTypeScript(t *testing.T) {
	ts := e2e.TSClient(t)
	off := newOffloader(t, typedPolicies...)
	s, raw := typedServer(off)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	got := ts.RunHTTP(t, srv.URL, "outputschema-ts", []e2e.Step{
		e2e.ListTools(),
		e2e.CallTool("report", map[string]any{"n": 600}),
		e2e.CallTool("report", map[string]any{"n": 3}),
		e2e.CallTool("raw_report", nil),
		e2e.ListTools(),
	})

	for _, i := range []int{0, 4} {
		require.True(t, got[i].OK, got[i].Error)
		var l struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(got[i].Result, &l))
		require.Len(t, l.Tools, 3)
		for _, tl := range l.Tools {
			assert.Equal(t, 1, strings.Count(string(tl.OutputSchema), `"anyOf"`), "listing %d, %s: widened once: %s", i, tl.Name, tl.OutputSchema)
			assert.Contains(t, string(tl.OutputSchema), "lro offload descriptor")
		}
	}
	assert.Equal(t, true, got[1].Structured(t)["offloaded"], "the large result is a descriptor")
	small := got[2].Structured(t)
	assert.NotContains(t, small, "offloaded")
	assert.EqualValues(t, 3, small["count"], "the small result is the tool's own")
	assert.Equal(t, true, got[3].Structured(t)["offloaded"])
	assert.JSONEq(t, reportSchema, string(raw.OutputSchema.(json.RawMessage)), "the server's own tool is unchanged")
}

// The go-sdk validates a typed tool's output inside the tool's handler
// (mcp.AddTool), before receiving middleware sees the result: the
// descriptor that replaces it is never checked against the tool's own
// schema, and an output the schema rejects is an error the middleware
// passes on.
func TestOutputSchemaServerValidation(t *testing.T) {
	off := newOffloader(t, typedPolicies...)
	s, _ := typedServer(off)
	cs, _ := connectHTTP(t, s, "2025-11-25")

	res := call(t, cs, "strict", map[string]any{"n": 600})
	require.False(t, res.IsError, text(res))
	sc, ok := res.StructuredContent.(map[string]any)
	require.True(t, ok, "%T", res.StructuredContent)
	assert.Equal(t, true, sc["offloaded"], "the go-sdk client gets the descriptor as structured content")
	assert.NotEmpty(t, sc["file_path"])

	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "strict", Arguments: map[string]any{"n": 1001}})
	require.Error(t, err, "the handler's own check still runs")
	assert.Contains(t, err.Error(), "validating tool output")

	res = call(t, cs, "report", map[string]any{"n": 3})
	sc, ok = res.StructuredContent.(map[string]any)
	require.True(t, ok, "%T", res.StructuredContent)
	assert.EqualValues(t, 3, sc["count"])
}

// A tool whose policy sets SkipOutputSchema, or that has no policy, is
// listed with its schema as declared.
func TestOutputSchemaListedAsDeclared(t *testing.T) {
	off := newOffloader(t, lro.WithTool("report", lro.ToolPolicy{Generic: true, SkipOutputSchema: true}))
	s, _ := typedServer(off)
	cs, _ := connectHTTP(t, s, "2025-11-25")
	l, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, l.Tools, 3)
	for _, tl := range l.Tools {
		b, err := json.Marshal(tl.OutputSchema)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "anyOf", tl.Name)
	}
}
