package gosdk

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/internal/proxywire"
)

// TestWithoutRepeat: only a result whose one plain text item is, byte for
// byte, its structured content's JSON loses the structured content; the
// handler's own result is never changed, and its _meta is kept.
func TestWithoutRepeat(t *testing.T) {
	const text = `{"memories":[{"id":"m1"}]}`
	r := &mcp.CallToolResult{Meta: mcp.Meta{"trace": "t1"}, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(text)}
	out := withoutRepeat(r)
	require.NotSame(t, r, out)
	assert.Nil(t, out.StructuredContent)
	assert.Equal(t, mcp.Meta{"trace": "t1", proxywire.MetaKey: true}, out.Meta)
	assert.Equal(t, mcp.Meta{"trace": "t1"}, r.Meta, "the handler's result is untouched")
	assert.NotNil(t, r.StructuredContent)

	value := &mcp.CallToolResult{Content: r.Content, StructuredContent: map[string]any{"memories": []any{map[string]any{"id": "m1"}}}}
	assert.Nil(t, withoutRepeat(value).StructuredContent, "a Go value that encodes to the text")

	for name, r := range map[string]*mcp.CallToolResult{
		"other bytes":       {Content: r.Content, StructuredContent: json.RawMessage(`{"memories":[{"id":"m1"}] }`)},
		"an annotated item": {Content: []mcp.Content{&mcp.TextContent{Text: text, Annotations: &mcp.Annotations{Priority: 1}}}, StructuredContent: json.RawMessage(text)},
		"two items":         {Content: []mcp.Content{r.Content[0], &mcp.TextContent{Text: "more"}}, StructuredContent: json.RawMessage(text)},
		"an error":          {Content: r.Content, StructuredContent: json.RawMessage(text), IsError: true},
		"no structured":     {Content: r.Content},
	} {
		assert.Same(t, r, withoutRepeat(r), name)
	}
	assert.Nil(t, withoutRepeat(nil))
}
