package mcpgo

import (
	"context"
	"maps"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro/internal/proxywire"
)

// A result is sent to an LRO proxy with its data once (see package
// internal/proxywire): a server leaves out structured content that its one
// text item repeats, and the proxy puts it back as soon as it has the
// result. What follows is the server's side of that for mcp-go.

// proxyRestores reports whether the client of the current request is an
// LRO proxy that restores structured content left out: it said so in the
// capabilities of the request's _meta (protocol 2026-07-28) or of its
// session.
func proxyRestores(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil &&
		proxywire.Announced(info.ClientCapabilities.Experimental) {
		return true
	}
	s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	return ok && proxywire.Announced(s.GetClientCapabilities().Experimental)
}

// withoutRepeat returns r without its structured content, marked, when
// its one plain text item repeats it; otherwise r itself. r is the
// handler's own value: the result returned is a copy.
func withoutRepeat(r *mcp.CallToolResult) *mcp.CallToolResult {
	if r == nil || r.IsError || r.NeedsInput() || len(r.Content) != 1 {
		return r
	}
	var t mcp.TextContent
	switch c := r.Content[0].(type) {
	case mcp.TextContent:
		t = c
	case *mcp.TextContent:
		t = *c
	default:
		return r
	}
	if t.Annotations != nil || t.Meta != nil {
		return r // kept whole: what is rebuilt is the text alone
	}
	var structured any = r.StructuredContent
	if len(r.RawStructuredContent) > 0 {
		structured = r.RawStructuredContent
	}
	if !proxywire.Repeats(t.Text, structured) {
		return r
	}
	out := *r
	out.StructuredContent, out.RawStructuredContent = nil, nil
	meta := &mcp.Meta{AdditionalFields: map[string]any{proxywire.MetaKey: true}}
	if m := r.Meta; m != nil {
		meta.ProgressToken = m.ProgressToken
		maps.Copy(meta.AdditionalFields, m.AdditionalFields)
	}
	out.Meta = meta
	return &out
}
