package host

import (
	"encoding/json"
	"time"
)

// A ToolDefinition is what a host adapter needs to register a tool of
// lro: the same name, description and input schema on every host.
type ToolDefinition struct {
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON Schema of type object
	// Meta is the tool's _meta: hints for clients, such as the bound of
	// its answers (see lro.MaxResultSizeCharsKey).
	Meta map[string]any
}

// A ResourceTemplate is an MCP resource template a host adapter registers
// so that clients can read offloaded files: the same on every host.
type ResourceTemplate struct {
	URITemplate string // RFC 6570, e.g. lro://files/atlatl-{operation}-{id}.jsonl
	Name        string
	Description string
	MIMEType    string // empty when files of either type match
}

// ResourceContents is what resources/read returns for one URI: one text
// item.
type ResourceContents struct {
	URI      string // the URI read
	MIMEType string // "application/jsonl", or "text/plain" for a file of text lines
	Text     string
	// Expires is when the file may be deleted, as its modification time
	// records it; zero when unknown. An offloaded file is one caller's:
	// adapters send cacheScope "private" and ttlMs the time to Expires
	// (SEP-2549, protocol 2026-07-28).
	Expires time.Time
}

// Cache hints (SEP-2549, protocol 2026-07-28) of a listing that holds
// lro's resource templates: resources/templates/list on a server that
// serves them, and the page of the proxy's listings where it adds them.
//
// The scope is private, as for a read: the templates lead to files that
// are each one caller's, and nothing lro answers of them is for a shared
// cache (the official SDK's default scope is public).
//
// The ttlMs is 0, "revalidate": lro lists no file, only its templates
// (a listing of its files would change at every offload, the time to the
// earliest expiry bounding only removals, never the next file written, so
// 0 would be the only right ttlMs there too). Its templates are fixed
// while the Offloader lives, but they share the listing with the
// server's own, whose freshness lro cannot see (mcp-go keeps the hints a
// server configures to itself), and 0 is the one ttlMs that is never
// stale for the whole listing; a listing of templates is small to fetch
// again.
const (
	CacheScopePrivate = "private"
	ListingTTLMs      = 0
)

// TTLMs is the time to c.Expires from now in milliseconds, 0 when it has
// passed or is unknown: the ttlMs of a resources/read result.
func (c ResourceContents) TTLMs(now time.Time) int64 {
	if c.Expires.IsZero() || !c.Expires.After(now) {
		return 0
	}
	return c.Expires.Sub(now).Milliseconds()
}
