package proxy

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/proxywire"
)

// A server on this module leaves out, for a proxy, structured content that
// a result's one text item repeats (see package internal/proxywire and
// package mcpgo's proxy_once.go); the proxy puts it back as soon as it has
// the result.

// restoreStructured puts back, on the proxy's side, the structured content
// a remote left out under proxywire.MetaKey, and removes the mark. A mark
// on a result it does not fit (more than one text item, structured content
// present, text that is not JSON) is only removed: a remote that marks
// what it should not gets its result passed on as it sent it.
func restoreStructured(res *mcp.CallToolResult) {
	m := res.Meta
	if m == nil {
		return
	}
	mark, ok := m.AdditionalFields[proxywire.MetaKey]
	if !ok {
		return
	}
	delete(m.AdditionalFields, proxywire.MetaKey)
	if len(m.AdditionalFields) == 0 && m.ProgressToken == nil {
		res.Meta = nil // as the remote's handler left it
	}
	if mark != true || res.StructuredContent != nil || len(res.RawStructuredContent) > 0 || len(res.Content) != 1 {
		return
	}
	t, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		return
	}
	if raw := json.RawMessage(t.Text); jsonscan.Valid(raw) {
		res.RawStructuredContent, res.StructuredContent = raw, raw
	}
}
