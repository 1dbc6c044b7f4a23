package proxy

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro/internal/jsonscan"
)

// scanRemoteMessage is decodeRemoteMessage's fast path: one validating
// pass over the message (jsonscan.ValidFields), then the members it reads
// sliced out of the checked text, where encoding/json makes two or three
// passes (it validates the whole text before decoding it, and scans the
// structured content once more to skip it), which on a large result cost
// more than the rest of the proxy's work. It takes the common shape only:
// a response whose result holds text items and structured content. On
// anything else (a key that is not plain ASCII or that comes twice,
// another kind of content item, deep nesting, a message that is not such
// a response) it returns false, and decodeRemoteMessage decodes the
// message with encoding/json instead; so this path only has to agree with
// encoding/json on the messages it takes, which FuzzScanRemoteMessage
// checks.
func scanRemoteMessage(data []byte) (json.RawMessage, *mcp.CallToolResult, bool) {
	top, ok := jsonscan.ValidFields(data)
	if !ok || top == nil {
		return nil, nil, false // not an object, or one of hundreds of members
	}
	var id, result []byte
	ok = readMembers(nil, top, messageKeys, func(k int, v []byte) bool {
		switch k {
		case 0:
			id = v
		case 1:
			result = v
		default:
			return false // a request or a notification, or an error: mcp-go's
		}
		return true
	})
	if !ok || !plainID(id) || result == nil || result[0] != '{' {
		return nil, nil, false
	}
	var r remoteResult
	var content []byte
	ok = readMembers(result, nil, resultKeys, func(k int, v []byte) bool {
		var err error
		switch k {
		case 0:
			err = decodeInto(v, &r.Meta)
		case 1:
			err = decodeInto(v, &r.ResultType)
		case 2:
			content = v
		case 3:
			r.Structured = bytes.Clone(v)
		case 4:
			err = decodeInto(v, &r.IsError)
		case 5:
			return false // a multi-round-trip step, whatever its value
		case 6:
			err = decodeInto(v, &r.RequestState)
		}
		return err == nil
	})
	if !ok || content == nil || content[0] != '[' || r.ResultType == mcp.ResultTypeInputRequired {
		return nil, nil, false
	}
	var items []mcp.Content
	_ = jsonscan.EachElement(content, func(el []byte) bool {
		var t mcp.TextContent
		if t, ok = textItem(el); ok {
			items = append(items, t)
		}
		return ok
	})
	if !ok {
		return nil, nil, false
	}
	return id, r.build(items), true
}

// The members the fast path reads, by the index readMembers passes on:
// the JSON names of remoteMessage, remoteResult and mcp.TextContent.
var (
	messageKeys = []string{"id", "result", "method", "error"}
	resultKeys  = []string{"_meta", "resultType", "content", "structuredContent", "isError", "inputRequests", "requestState"}
	itemKeys    = []string{"type", "text", "annotations", "_meta"}
)

// textItem reads el, an item of the content, as mcp.UnmarshalContent reads
// a text item; false for any other item.
func textItem(el []byte) (mcp.TextContent, bool) {
	var t mcp.TextContent
	if el[0] != '{' {
		return t, false
	}
	ok := readMembers(el, nil, itemKeys, func(k int, v []byte) bool {
		var err error
		str := true
		switch k {
		case 0:
			t.Type, str = jsonscan.Unquote(v)
		case 1:
			t.Text, str = jsonscan.Unquote(v)
		case 2:
			err = decodeInto(v, &t.Annotations)
		case 3:
			err = decodeInto(v, &t.Meta)
		}
		return str && err == nil
	})
	return t, ok && t.Type == mcp.ContentTypeText
}

// readMembers calls f with each of the members of obj, an object of the
// message, that encoding/json would decode into the struct field
// names[k]: k and the member's value. fields, when not nil, are obj's
// members, already found. It reports false, for encoding/json to decode
// the message instead, when f does, and when the fast path cannot be sure
// to read the object as encoding/json does: a key that names a field a
// second time (encoding/json decodes into it twice), a key that is not
// plain ASCII (encoding/json matches escapes and some non-ASCII letters
// to ASCII names). (Nesting needs no check: jsonscan.Valid refuses what
// encoding/json would.)
func readMembers(obj []byte, fields []jsonscan.Field, names []string, f func(k int, v []byte) bool) bool {
	var seen uint
	ok := true
	read := func(m jsonscan.Field) bool {
		k := slices.IndexFunc(names, func(name string) bool { return bytes.EqualFold(m.Key, []byte(name)) })
		switch {
		case !plainKey(m.Key):
			ok = false
		case k < 0:
		case seen&(1<<k) != 0 || !f(k, m.Value):
			ok = false
		default:
			seen |= 1 << k
		}
		return ok
	}
	if fields == nil {
		_ = jsonscan.Fields(obj, read)
	}
	for _, m := range fields {
		if !read(m) {
			break
		}
	}
	return ok
}

// decodeInto decodes v into *dst with encoding/json, by way of a copy, so
// that what dst points into stays on the stack and costs nothing when
// the member is absent.
func decodeInto[T any](v []byte, dst *T) error {
	var x T
	err := json.Unmarshal(v, &x)
	*dst = x
	return err
}

// plainKey reports whether key, as written, is plain ASCII without
// escapes: a name bytes.EqualFold matches as encoding/json does.
func plainKey(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
