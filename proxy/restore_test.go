package proxy

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"

	"github.com/mcplro/lro/internal/proxywire"
)

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
