package proxy

import (
	"github.com/mark3labs/mcp-go/mcp"
)

// The proxy's verdict on a server's tool result, on both paths (a
// remote's and a local server's), before the Offloader judges its size.

// judge returns what the client gets of the server's result of tool: a
// descriptor look-alike becomes a tool error that says so, and an error is
// cut to MaxErrorBytes (see [Proxy]). The rest goes on untouched, for the
// offload middleware to judge, with the structured content the server
// left out for the proxy put back (see package mcpgo's proxy_once.go).
func (p *Proxy) judge(tool string, res *mcp.CallToolResult) *mcp.CallToolResult {
	dropServerInfo(res)
	restoreStructured(res)
	if why := lookalike(res); why != "" {
		p.warnOnce("lookalike "+tool, "lro proxy: a remote result looks like an offload descriptor; the client gets a tool error instead", "tool", tool, "why", why)
		return lookalikeResult(p.upstream(), tool, why, res, p.lim.errText)
	}
	if res.IsError {
		return boundError(res, p.lim.errText)
	}
	return res
}

// dropServerInfo removes the remote's identity from the result's _meta:
// the client talks to the proxy.
func dropServerInfo(res *mcp.CallToolResult) {
	if res.Meta != nil {
		delete(res.Meta.AdditionalFields, "io.modelcontextprotocol/serverInfo")
	}
}
