package lro

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

// TestRestoreStructured: the proxy puts the structured content back from
// the text and drops the mark; a mark on a result it does not fit is only
// dropped.
func TestRestoreStructured(t *testing.T) {
	marked := func(meta map[string]any, content ...mcp.Content) *mcp.CallToolResult {
		m := map[string]any{proxywire.MetaKey: true}
		for k, v := range meta {
			m[k] = v
		}
		return &mcp.CallToolResult{Result: mcp.Result{Meta: &mcp.Meta{AdditionalFields: m}}, Content: content}
	}

	r := marked(nil, mcp.NewTextContent(`{"a":[1,2]}`))
	restoreStructured(r)
	assert.Nil(t, r.Meta, "no _meta of its own")
	assert.Equal(t, json.RawMessage(`{"a":[1,2]}`), r.RawStructuredContent)
	assert.Equal(t, json.RawMessage(`{"a":[1,2]}`), r.StructuredContent)

	r = marked(map[string]any{"trace": "t1"}, mcp.NewTextContent(`[]`))
	restoreStructured(r)
	assert.Equal(t, map[string]any{"trace": "t1"}, r.Meta.AdditionalFields)
	assert.Equal(t, json.RawMessage(`[]`), r.RawStructuredContent)

	for name, r := range map[string]*mcp.CallToolResult{
		"text that is not JSON": marked(nil, mcp.NewTextContent(`{"a":`)),
		"two items":             marked(nil, mcp.NewTextContent(`{}`), mcp.NewTextContent(`{}`)),
		"an image":              marked(nil, mcp.NewImageContent("AAAA", "image/png")),
		"a mark that is not true": {Result: mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{proxywire.MetaKey: "yes"}}},
			Content: []mcp.Content{mcp.NewTextContent(`{}`)}},
	} {
		restoreStructured(r)
		assert.Nil(t, r.StructuredContent, name)
		assert.Nil(t, r.Meta, name)
	}

	both := marked(nil, mcp.NewTextContent(`{"a":1}`))
	both.StructuredContent = map[string]any{"b": 2}
	restoreStructured(both)
	assert.Equal(t, map[string]any{"b": 2}, both.StructuredContent, "structured content sent is kept")

	plain := mcp.NewToolResultText(`{"a":1}`)
	restoreStructured(plain)
	assert.Nil(t, plain.StructuredContent, "no mark, nothing restored")
}
