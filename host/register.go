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

// TTLMs is the time to c.Expires from now in milliseconds, 0 when it has
// passed or is unknown: the ttlMs of a resources/read result.
func (c ResourceContents) TTLMs(now time.Time) int64 {
	if c.Expires.IsZero() || !c.Expires.After(now) {
		return 0
	}
	return c.Expires.Sub(now).Milliseconds()
}
