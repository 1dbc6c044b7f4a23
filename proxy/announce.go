package proxy

import (
	"bytes"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro/internal/proxywire"
)

// The proxy announces itself to the server in whatever the protocol
// generation carries: clientInfo.proxy = true and the experimental
// capability proxywire.Capability, in initialize (2025-11-25) and in the
// client info and capabilities of each request's _meta (2026-07-28, which
// has no initialize). A server on lro then returns full results to the
// proxy, and only the proxy offloads them.

// withProxyCapability returns raw, a client's capabilities object, with
// the proxy's experimental capability added; raw that is not an object
// becomes one with that capability alone.
func withProxyCapability(raw json.RawMessage) json.RawMessage {
	var caps map[string]json.RawMessage
	if json.Unmarshal(raw, &caps) != nil || caps == nil {
		caps = map[string]json.RawMessage{}
	}
	var exp map[string]json.RawMessage
	if json.Unmarshal(caps["experimental"], &exp) != nil || exp == nil {
		exp = map[string]json.RawMessage{}
	}
	exp[proxywire.Capability] = json.RawMessage(`{"` + proxywire.Feature + `":true}`)
	caps["experimental"], _ = json.Marshal(exp)
	out, _ := json.Marshal(caps)
	return out
}

// perRequestKeys are the _meta keys by which a request of protocol
// 2026-07-28 says who its client is.
var perRequestKeys = []string{mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities, mcp.MetaKeyProtocolVersion}

// announced returns line, a request of the client on its way to the
// server, with the proxy announced in its _meta when the request says
// there who its client is (protocol 2026-07-28): its client info gets
// proxy = true, its client capabilities the proxy's. Any other request
// (of an older protocol, whose initialize announced the proxy) is line
// itself, unread but for a scan for the keys.
func announced(line []byte) []byte {
	if !bytes.Contains(line, []byte(`"io.modelcontextprotocol/`)) {
		return line
	}
	var msg map[string]json.RawMessage
	var params map[string]json.RawMessage
	var meta map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil || json.Unmarshal(msg["params"], &params) != nil ||
		json.Unmarshal(params["_meta"], &meta) != nil || meta == nil {
		return line
	}
	perRequest := false
	for _, k := range perRequestKeys {
		_, ok := meta[k]
		perRequest = perRequest || ok
	}
	if !perRequest {
		return line
	}
	if ci, ok := meta[mcp.MetaKeyClientInfo]; ok {
		meta[mcp.MetaKeyClientInfo] = proxywire.WithProxyFlag(ci)
	}
	meta[mcp.MetaKeyClientCapabilities] = withProxyCapability(meta[mcp.MetaKeyClientCapabilities])
	params["_meta"], _ = json.Marshal(meta)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return out
}
