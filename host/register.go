package host

import "encoding/json"

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
}
