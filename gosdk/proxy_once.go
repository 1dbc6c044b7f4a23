package gosdk

import (
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcplro/lro/internal/proxywire"
)

// proxyRestores reports whether the client of req is an LRO proxy that
// restores structured content left out for it (see [withoutRepeat]): it
// said so in the capabilities of the request's _meta (protocol
// 2026-07-28) or of its initialize request.
func proxyRestores(req *mcp.CallToolRequest) bool {
	if req == nil {
		return false
	}
	if c := req.ClientCapabilities(); c != nil && proxywire.Announced(c.Experimental) {
		return true
	}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.Capabilities != nil {
			return proxywire.Announced(p.Capabilities.Experimental)
		}
	}
	return false
}

// withoutRepeat returns r without its structured content, marked, when
// its one plain text item repeats it, as a typed tool's does: the proxy
// puts it back, and the data crosses the wire once. Otherwise it returns r
// itself. r is the handler's own value: the result returned is a copy.
func withoutRepeat(r *mcp.CallToolResult) *mcp.CallToolResult {
	if r == nil || r.IsError || r.NeedsInput() || len(r.Content) != 1 {
		return r
	}
	t, ok := r.Content[0].(*mcp.TextContent)
	if !ok || t.Annotations != nil || t.Meta != nil || !proxywire.Repeats(t.Text, r.StructuredContent) {
		return r
	}
	out := *r
	out.StructuredContent = nil
	out.Meta = maps.Clone(r.Meta)
	if out.Meta == nil {
		out.Meta = mcp.Meta{}
	}
	out.Meta[proxywire.MetaKey] = true
	return &out
}
