// Package proxywire holds what a server of this module and an LRO proxy
// agree on beyond the specification, so that both Go SDK adapters and the
// proxy read it from one place.
//
// A remote server sends an LRO proxy every result in full, for the proxy to
// offload on its own side. A result from mcp.NewToolResultJSON or a typed
// tool carries its data twice: as structured content, and as the same JSON
// in a text item, escaped. Encoding, sending and decoding that copy was most
// of a proxied call's cost. A proxy that announces [Feature] gets such a
// result without its structured content, marked with [MetaKey], and puts
// the structured content back from the text before anything else reads the
// result: its client gets what a direct call sends. A client that does not
// announce the feature (another proxy, one of an earlier version) gets
// results as they are.
package proxywire

import "encoding/json"

// Capability is the key of the experimental client capability by which an
// LRO proxy announces itself (host.ProxyCapability).
const Capability = "io.github.mcplro/proxy"

// Feature is the member of the proxy's capability object, set to true, by
// which it says it restores structured content left out under [MetaKey].
const Feature = "structuredFromText"

// MetaKey is the _meta key, set to true, of a result whose structured
// content was left out because it is, byte for byte, the text of the
// result's one text item.
const MetaKey = "io.github.mcplro/structuredFromText"

// Announced reports whether a client's experimental capabilities hold the
// proxy capability with [Feature] set.
func Announced(experimental map[string]any) bool {
	c, ok := experimental[Capability].(map[string]any)
	return ok && c[Feature] == true
}

// Repeats reports whether structured, a result's structured content (JSON
// bytes or a Go value), encodes to exactly text, as json.Marshal encodes it
// for mcp.NewToolResultJSON and the SDKs' typed tools.
func Repeats(text string, structured any) bool {
	var b []byte
	switch s := structured.(type) {
	case nil:
		return false
	case json.RawMessage:
		b = s
	case []byte:
		b = s
	default:
		if !startsValue(text) {
			return false // prose: spare the marshal
		}
		var err error
		if b, err = json.Marshal(s); err != nil {
			return false
		}
	}
	return len(b) > 0 && string(b) == text
}

// startsValue reports whether text starts as json.Marshal's output does.
func startsValue(text string) bool {
	if text == "" {
		return false
	}
	switch c := text[0]; {
	case c == '{', c == '[', c == '"', c == '-', c >= '0' && c <= '9', c == 't', c == 'f', c == 'n':
		return true
	}
	return false
}

// WithProxyFlag returns raw, a clientInfo object, with "proxy": true added:
// the announcement of the specification, in a field that SDKs' typed
// client info does not model. raw that is not a JSON object becomes one
// with the flag alone.
func WithProxyFlag(raw json.RawMessage) json.RawMessage {
	var info map[string]any
	if json.Unmarshal(raw, &info) != nil || info == nil {
		info = map[string]any{}
	}
	info["proxy"] = true
	out, _ := json.Marshal(info)
	return out
}
