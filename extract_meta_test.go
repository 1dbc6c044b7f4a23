package lro_test

import (
	"context"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
)

// TestExtractToolMaxResultSize: lro_extract's definition, as an mcp-go
// client lists it, tells the client the most characters an answer holds
// (_meta["anthropic/maxResultSizeChars"]), so that a client that moves
// large answers to a file keeps lro's own inline; and the largest answers
// lro_extract gives stay within it.
func TestExtractToolMaxResultSize(t *testing.T) {
	c, o := extractServer(t, nil)
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	require.NoError(t, err)
	var bound float64
	for _, tl := range tools.Tools {
		if tl.Name == lro.ExtractToolName {
			require.NotNil(t, tl.Meta, "lro_extract has a _meta")
			v, ok := tl.Meta.AdditionalFields[lro.MaxResultSizeCharsKey].(float64)
			require.True(t, ok, "%s is a number: %#v", lro.MaxResultSizeCharsKey, tl.Meta.AdditionalFields)
			bound = v
		}
	}
	assert.Equal(t, float64(4*(lro.DefaultThresholdTokens+lro.NoticeTokens)), bound)
	assert.Equal(t, o.MaxExtractChars(), int(bound))

	d := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "", "limit": 500, "detail": "full"}))
	for _, args := range []map[string]any{
		{"file_path": d.FilePath, "query": "."},
		{"file_path": d.FilePath, "query": ".", "slurp": true},
		{"file_path": d.FilePath, "lines": "1-"},
		{"file_path": d.FilePath, "grep": "."},
	} {
		text := textOf(t, extract(t, c, args), 0)
		assert.LessOrEqual(t, utf8.RuneCountInString(text), int(bound), "%v", args)
		assert.Greater(t, utf8.RuneCountInString(text), int(bound)/2, "%v: a large answer, near the bound", args)
	}
}
