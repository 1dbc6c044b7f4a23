package proxy

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro/host"
)

// The cache hints of the page of a listing where the proxy adds its own
// lro:// templates (SEP-2549, protocol 2026-07-28): cacheScope "private"
// and ttlMs 0, as a server with lro's templates sends (see
// host.ListingTTLMs). The pages before it are the server's, as it sent
// them; the local server's own answers have the same hints from
// mcpgo.AddResources.

// modernRequest reports whether params, a request's, say protocol
// 2026-07-28 or later in their _meta: the protocol whose listings carry
// cache hints. Before it the fields do not exist, and nothing is added.
func modernRequest(params json.RawMessage) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var version string
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &version) != nil {
		return false
	}
	return mcp.IsModernProtocol(version)
}

// withListingHints sets the cache hints of a listing of lro's templates
// on result, a listing page's result members.
func withListingHints(result map[string]json.RawMessage) {
	result["cacheScope"], _ = json.Marshal(host.CacheScopePrivate)
	result["ttlMs"], _ = json.Marshal(host.ListingTTLMs)
}

// listingHints returns msg, an answer of the client's request whose
// result is a page holding the proxy's lro:// templates, with their cache
// hints when the request is of protocol 2026-07-28; msg as it is
// otherwise, or when it is not such an answer.
func listingHints(msg []byte, params json.RawMessage) []byte {
	if !modernRequest(params) {
		return msg
	}
	var m, result map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || json.Unmarshal(m["result"], &result) != nil || result == nil {
		return msg
	}
	withListingHints(result)
	m["result"], _ = json.Marshal(result)
	b, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return b
}
