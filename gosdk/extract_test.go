package gosdk_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtractTool: lro_extract on the official SDK is annotated read-only,
// the descriptors' guidance points to it (it pointed to the shell),
// non-destructive, idempotent and closed-world, and answers through a
// worker process of this test binary (which links lro, and so serves as
// its own worker), with its errors as tool errors.
func TestExtractTool(t *testing.T) {
	off := newOffloader(t, lro.WithTool("export", lro.ToolPolicy{Generic: true}))
	s := newServer(off)
	gosdk.AddExtractTool(s, off)
	cs, _ := connectHTTP(t, s, "2026-07-28")

	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var tool *mcp.Tool
	for _, tl := range tools.Tools {
		if tl.Name == lro.ExtractToolName {
			tool = tl
		}
	}
	require.NotNil(t, tool)
	// The bound of its answers, for clients that move large answers to a
	// file (see lro.MaxResultSizeCharsKey).
	assert.Equal(t, float64(off.MaxExtractChars()), tool.Meta[lro.MaxResultSizeCharsKey])
	assert.Equal(t, 4*(lro.DefaultThresholdTokens+lro.NoticeTokens), off.MaxExtractChars())
	require.NotNil(t, tool.Annotations)
	assert.True(t, tool.Annotations.ReadOnlyHint)
	assert.True(t, tool.Annotations.IdempotentHint)
	require.NotNil(t, tool.Annotations.DestructiveHint)
	assert.False(t, *tool.Annotations.DestructiveHint)
	require.NotNil(t, tool.Annotations.OpenWorldHint)
	assert.False(t, *tool.Annotations.OpenWorldHint)

	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(text(call(t, cs, "export", nil))), &d))
	require.True(t, d.Offloaded)
	assert.Contains(t, d.Guidance, "lro_extract(")
	recs := make([]json.RawMessage, 300)
	for i := range recs {
		recs[i] = json.RawMessage(`{"id":1,"title":"a record of some forty bytes"}`)
	}
	direct, err := off.Offload(context.Background(), lro.ResultSet{Operation: "export", Generic: true, Records: recs})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, direct.Action)
	assert.Contains(t, direct.Response.Guidance, "lro_extract(", "registering the tool marks the Offloader as serving it, as on mcp-go")
	res := call(t, cs, lro.ExtractToolName, map[string]any{"file_path": d.FilePath, "query": "select(.id < 3) | .id"})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "0\n1\n2\n", text(res))

	res = call(t, cs, lro.ExtractToolName, map[string]any{"file_path": d.FilePath, "query": `error("x" * 60000)`})
	assert.True(t, res.IsError)
	assert.Less(t, len(text(res)), 2200, "errors are capped")
	assert.True(t, strings.HasPrefix(text(res), "lro_extract: query failed on record 1: xxx"))
}
