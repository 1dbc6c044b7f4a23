package gosdk

import (
	"github.com/mcplro/lro/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// IsProxyClient reports whether the client of req is an LRO proxy, which
// offloads on its own side and so gets full results inline. It reads every
// channel a proxy announces itself on (see [host.ProxyAnnounced]): the
// client info and capabilities in the request's _meta (protocol
// 2026-07-28), and the capabilities of the session's initialize request.
// (The SDK keeps no unknown clientInfo fields of initialize; the proxy
// also sends the capability [host.ProxyCapability], which it keeps.)
func IsProxyClient(req *mcp.CallToolRequest) bool {
	if req == nil {
		return false
	}
	if req.Params != nil {
		if ci, ok := req.Params.GetMeta()[mcp.MetaKeyClientInfo].(map[string]any); ok && host.ProxyAnnounced(ci, nil) {
			return true
		}
	}
	if c := req.ClientCapabilities(); c != nil && host.ProxyAnnounced(nil, c.Experimental) {
		return true
	}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.Capabilities != nil {
			return host.ProxyAnnounced(nil, p.Capabilities.Experimental)
		}
	}
	return false
}
