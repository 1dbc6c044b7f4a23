// Package host is the seam between lro's core and the SDK that serves a
// tool: the host-neutral form of a tool call and its result, and of the
// tools and resources lro asks a host to register. Server authors never
// need it: the adapters of this module (mcpgo.Middleware for
// mcp-go, package gosdk for the official SDK, and the proxy) translate
// their SDK's values to these and call [lro.Host]. An adapter for another
// SDK does the same.
package host

import (
	"encoding/json"

	"github.com/mcplro/lro/internal/proxywire"
)

// A Call is one tool call as a host adapter hands it to [lro.Host.Serve].
// The adapters of this module fill it from their SDK's request; an adapter
// for another host does the same.
type Call struct {
	// Tool is the name of the tool called.
	Tool string
	// Arguments are the call's arguments decoded from JSON, or nil. Only
	// "detail", "query" and a page size ("limit", "page_size", "pageSize",
	// "per_page", "perPage", "max_results", "maxResults") are read; the
	// handler gets every argument as the client sent it.
	Arguments map[string]any
	// InputSchema returns the tool's input schema as JSON, or nil when it
	// is not known; InputSchema itself may be nil. It is called only when
	// needed, rarely: a detail argument that is not one of lro's levels is
	// the tool's own when the schema declares a property "detail" (and
	// refused otherwise), and a page too large to send names the page-size
	// argument the schema declares.
	InputSchema func() json.RawMessage
	// FromProxy says the client is an LRO proxy (see [ProxyAnnounced]),
	// which offloads on its own side: it gets full results inline.
	FromProxy bool
	// OutputSchema says the tool declares an output schema.
	OutputSchema bool
	// NativeExtract says the server handling the call serves lro_extract,
	// so that guidance points to it instead of the shell.
	NativeExtract bool
	// Resources says the server handling the call answers resources/read
	// for offloaded files, so that results carry a resource link.
	Resources bool
	// Session identifies the MCP session, or else the client connection,
	// for Config.SessionBudgetTokens; empty when there is neither. Call
	// [lro.Offloader.EndSession] when it ends.
	Session string
	// Client describes the client, for a [lro.WithDelivery] function.
	Client ClientInfo
}

// A Result is a tool result reduced to what offloading reads and writes:
// the host-neutral form the adapters translate their SDK's result to and
// from.
type Result struct {
	// Content holds the content items in order.
	Content []Content
	// Structured is the structured content: JSON bytes (json.RawMessage
	// or []byte), a Go value that encoding/json marshals, or nil for none.
	Structured any
	// IsError marks a tool error. Errors are not offloaded; one over the
	// bound is cut (see [lro.Host.Serve]).
	IsError bool
	// NeedsInput marks a result that asks the client for more input; it
	// is not offloaded, and cut when over the bound.
	NeedsInput bool
	// Meta is the result's _meta: the host SDK's own value (adapters
	// pass it as they found it, and send what comes back), JSON bytes,
	// or nil for none. It counts toward the bound, and a _meta that does
	// not fit beside the answer is dropped whole, with a note in the
	// answer; a result that comes back with Meta nil goes out without it.
	Meta any
}

// Content is one content item of a [Result].
type Content struct {
	// Text is the text of a text item or of an embedded text resource.
	Text string
	// URI is the URI of an embedded resource with a text, which may be
	// empty: its text is Text, and Other holds the host's item. An item
	// with Other set and a Text is judged as text (see [Content.Judged]).
	URI string
	// Other holds the host's own value of an item that is not text (an
	// image, audio, a binary resource), which offloading keeps as it is.
	// It is nil for a text item.
	Other any
	// Link is set for a resource link: one lro adds, a pointer to an
	// offloaded file that the client reads with resources/read, which
	// adapters turn into their SDK's resource_link item; or one of the
	// handler's, whose host item is Other, which adapters describe here
	// so that its text (its name, title and description reach the model)
	// counts toward the bound.
	Link *ResourceLink
}

// A ResourceLink points at an offloaded file as an MCP resource, which any
// client can read through the server, wherever its disk is.
type ResourceLink struct {
	URI         string // lro:// URI the server answers resources/read for
	Name        string // the file's name
	Title       string // a handler's link's title; lro's links have none
	Description string
	MIMEType    string // "application/jsonl", or "text/plain" for lines of text
	Size        int64  // the file's size in bytes
}

// Judged reports whether c is text the library judges: a text item, or
// an embedded resource with a text, whatever its URI (empty or not) and
// whether or not it holds a blob too. Only items with no text at all
// (images, audio, binary resources) are not judged, and stay as they are.
func (c Content) Judged() bool { return c.Other == nil || c.Text != "" || c.URI != "" }

// TextContent returns a text item.
func TextContent(text string) Content { return Content{Text: text} }

// ClientInfo describes the client of a call, as it introduced itself.
type ClientInfo struct {
	Name    string // clientInfo.name of initialize, e.g. "claude-code"
	Version string
	// Capabilities are the client's capabilities as JSON, or nil when
	// unknown. Adapters fill them only when a [lro.WithDelivery] function is
	// set, since nothing else reads them.
	Capabilities json.RawMessage
}

// ProxyCapability is the key of the experimental client capability by
// which an LRO proxy announces itself, besides clientInfo.proxy = true:
// typed capabilities survive every SDK, where unknown clientInfo fields do
// not. Its value is an object; {"structuredFromText": true} says the proxy
// puts back structured content that a server leaves out because the
// result's one text item repeats it, which the adapters of this module
// then do (see package github.com/mcplro/lro/proxy).
const ProxyCapability = proxywire.Capability

// ProxyAnnounced reports whether a client announced itself as an LRO proxy:
// proxy: true in its client info, or the experimental capability
// [ProxyCapability]. Both are the JSON objects the client sent, decoded;
// either may be nil. Host adapters call it on every channel the client may
// have used (initialize, the request's _meta).
func ProxyAnnounced(clientInfo, experimental map[string]any) bool {
	if clientInfo["proxy"] == true {
		return true
	}
	_, ok := experimental[ProxyCapability]
	return ok
}
