package mcpgo

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/internal/proxywire"
)

// TestWithoutRepeat: only a result whose one plain text item is, byte for
// byte, its structured content's JSON loses the structured content; the
// handler's own result is never changed, and its _meta is kept.
func TestWithoutRepeat(t *testing.T) {
	v := map[string]any{"memories": []any{map[string]any{"id": "m1"}}}
	r, err := mcp.NewToolResultJSON(v)
	require.NoError(t, err)
	r.Meta = &mcp.Meta{ProgressToken: 7, AdditionalFields: map[string]any{"trace": "t1"}}

	out := withoutRepeat(r)
	require.NotSame(t, r, out)
	assert.Nil(t, out.StructuredContent)
	assert.Equal(t, r.Content, out.Content)
	assert.Equal(t, true, out.Meta.AdditionalFields[proxywire.MetaKey])
	assert.Equal(t, "t1", out.Meta.AdditionalFields["trace"])
	assert.Equal(t, mcp.ProgressToken(7), out.Meta.ProgressToken)
	assert.Equal(t, v, r.StructuredContent, "the handler's result is untouched")
	assert.NotContains(t, r.Meta.AdditionalFields, proxywire.MetaKey)

	raw := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Type: "text", Text: `{"a":1}`}}, RawStructuredContent: json.RawMessage(`{"a":1}`)}
	assert.Nil(t, withoutRepeat(raw).RawStructuredContent, "raw structured content, a pointer item")

	kept := map[string]*mcp.CallToolResult{
		"a summary for text": mcp.NewToolResultStructured(v, "1 memory"),
		"an annotated item": {Content: []mcp.Content{mcp.TextContent{Type: "text", Text: r.Content[0].(mcp.TextContent).Text,
			Annotated: mcp.Annotated{Annotations: &mcp.Annotations{Priority: ptr(1.0)}}}}, StructuredContent: v},
		"two items":     {Content: []mcp.Content{r.Content[0], mcp.NewTextContent("more")}, StructuredContent: v},
		"an image":      {Content: []mcp.Content{mcp.NewImageContent("AAAA", "image/png")}, StructuredContent: v},
		"an error":      {Content: r.Content, StructuredContent: v, IsError: true},
		"no structured": mcp.NewToolResultText(`{"a":1}`),
	}
	for name, r := range kept {
		assert.Same(t, r, withoutRepeat(r), name)
	}
	assert.Nil(t, withoutRepeat(nil))
}

func ptr[T any](v T) *T { return &v }
