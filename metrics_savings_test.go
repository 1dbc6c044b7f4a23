package lro_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/mcpgo"
)

// TestMetricsTokensKeptOut: lro.offload.tokens counts the tokens kept out
// of the context, the result's inline estimate less that of what was sent
// in its place (it counted the whole estimate, descriptor included), and
// names the tool of a served call beside its operation.
func TestMetricsTokensKeptOut(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	o := newOffloader(t, nil, lro.WithMeterProvider(mp))
	ctx := context.Background()

	// A direct Offload: what is sent is the descriptor.
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 60, lro.DetailFull)})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)
	desc, err := json.Marshal(out.Response)
	require.NoError(t, err)
	got := sums(t, reader)
	assert.Equal(t, int64(out.Tokens-o.EstimateTokens(desc)), got["lro.offload.tokens recall"])

	// A served call: what is sent is the tool's answer, and the counts
	// carry the tool.
	s := memserver.New(testStore, o)
	c := connect(t, s)
	res := callTool(t, c, "recall_memories", map[string]any{"query": "", "limit": 200, "detail": "full"})
	d := descriptor(t, res)
	sent := 0
	for _, item := range res.Content {
		if tc, ok := item.(mcp.TextContent); ok {
			sent += o.EstimateTokens([]byte(tc.Text))
		}
	}
	got = sums(t, reader)
	kept := got["lro.offload.tokens recall recall_memories"]
	assert.Equal(t, int64(d.Summary.EstimatedTokens-sent), kept, "inline estimate %d, sent %d", d.Summary.EstimatedTokens, sent)
	assert.Greater(t, kept, int64(1600))
	assert.Equal(t, int64(1), got["lro.offloads recall recall_memories"])
	assert.Equal(t, int64(1), got["lro.offload.duration recall ok recall_memories count"])
}

// TestMetricsExtractDeadline: an lro_extract query stopped at its deadline
// is counted as such (outcome "deadline"), apart from other refusals, in
// a worker process and in process.
func TestMetricsExtractDeadline(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		o := newOffloader(t, nil, lro.WithMeterProvider(mp),
			lro.WithExtractLimits(lro.ExtractLimits{Timeout: 250 * time.Millisecond, InProcess: inProcess}))
		mcpgo.AddExtractTool(memserver.New(testStore, o), o)
		out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: memories(t, 60, lro.DetailFull)})
		require.NoError(t, err)
		_, err = o.Extract(context.Background(), map[string]any{"file_path": out.Response.FilePath, "query": "last(range(1e15))", "slurp": true})
		require.ErrorContains(t, err, "took longer than", "in process: %v", inProcess)
		_, err = o.Extract(context.Background(), map[string]any{"file_path": out.Response.FilePath, "query": "error(\"no\")"})
		require.Error(t, err)
		got := sums(t, reader)
		assert.Equal(t, int64(1), got["lro.extract.calls deadline"], "in process: %v", inProcess)
		assert.Equal(t, int64(1), got["lro.extract.calls refused"], "in process: %v", inProcess)
	}
}
