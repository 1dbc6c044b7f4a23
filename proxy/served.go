package proxy

import (
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/mcpgo"
)

// The upstream's tools as the front server serves them, on both paths: a
// remote's (syncTools) and a local server's (the client's listings, see
// child_tools.go) go through applyListing, which keeps the current
// listing only, bounded by MaxToolsBytes.

// toolHandler returns the front server's handler of the upstream's tool
// name: the call forwarded to the remote or to the local server, judged
// as generic records when the Offloader has no policy for it (see
// Config.MemoryToolsOnly).
func (p *Proxy) toolHandler(name string) server.ToolHandlerFunc {
	var handler server.ToolHandlerFunc
	if p.child != nil {
		handler = p.forwardChild(name)
	} else {
		handler = p.forward(name)
	}
	if p.generic(name) {
		handler = mcpgo.Wrap(p.off, lro.ToolPolicy{Generic: true}, handler)
	}
	return handler
}

// generic reports whether the results of the upstream's tool name are
// judged as generic records, its output schema widened to admit the
// descriptor.
func (p *Proxy) generic(name string) bool {
	return !p.cfg.MemoryToolsOnly && !p.off.Host().HasPolicy(name)
}

// overTools returns the error of a tool listing of size bytes when it is
// larger than MaxToolsBytes, or nil.
func (p *Proxy) overTools(size int64) *RemoteLimitError {
	if p.lim.tools > 0 && size > p.lim.tools {
		return &RemoteLimitError{Limit: "MaxToolsBytes", Bytes: p.lim.tools}
	}
	return nil
}
