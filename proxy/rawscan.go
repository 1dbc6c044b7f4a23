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
	ok = readMembers(top, messageKeys, func(k int, v []byte) bool {
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
	var items []mcp.Content
	content := false
	_, ok = eachMember(result, 0, resultKeys, func(k, at int) (int, bool) {
		if k == 2 {
			end, its, ok := textItems(result, at)
			items, content = its, ok
			return end, ok
		}
		end := jsonscan.SkipValue(result, at)
		v := result[at:end]
		var err error
		switch k {
		case 0:
			err = decodeInto(v, &r.Meta)
		case 1:
			err = decodeInto(v, &r.ResultType)
		case 3:
			r.Structured = bytes.Clone(v)
		case 4:
			err = decodeInto(v, &r.IsError)
		case 5:
			return end, false // a multi-round-trip step, whatever its value
		case 6:
			err = decodeInto(v, &r.RequestState)
		}
		return end, err == nil
	})
	if !ok || !content || r.ResultType == mcp.ResultTypeInputRequired {
		return nil, nil, false
	}
	return id, r.build(items), true
}

// The members the fast path reads, by the index readMembers and
// eachMember pass on: the JSON names of remoteMessage, remoteResult and
// mcp.TextContent.
var (
	messageKeys = []string{"id", "result", "method", "error"}
	resultKeys  = []string{"_meta", "resultType", "content", "structuredContent", "isError", "inputRequests", "requestState"}
	itemKeys    = []string{"type", "text", "annotations", "_meta"}
)

// textItems reads the content array at data[at] as mcp.UnmarshalContent
// reads each of its items, when all are text items: it returns the index
// past the array and the items; false for any other item. It reads each
// item where it is, rather than find the array's end and then each item's
// (jsonscan.SkipValue), then each member's: a text of 100 KB was walked
// three times to be read once.
func textItems(data []byte, at int) (int, []mcp.Content, bool) {
	if data[at] != '[' {
		return 0, nil, false
	}
	var items []mcp.Content
	i := jsonscan.SkipSpace(data, at+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, items, true
	}
	for i < len(data) {
		t, end, ok := textItem(data, i)
		if !ok {
			return 0, nil, false
		}
		items = append(items, t)
		if i = jsonscan.SkipSpace(data, end); i < len(data) && data[i] == ']' {
			return i + 1, items, true
		}
		i = jsonscan.SkipSpace(data, i+1) // past ','
	}
	return 0, nil, false
}

// textItem reads the item at data[i] as mcp.UnmarshalContent reads a
// text item, and returns it with the index past it; false for any other
// item.
func textItem(data []byte, i int) (mcp.TextContent, int, bool) {
	var t mcp.TextContent
	if data[i] != '{' {
		return t, 0, false
	}
	end, ok := eachMember(data, i, itemKeys, func(k, at int) (int, bool) {
		end := jsonscan.SkipValue(data, at)
		v := data[at:end]
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
		return end, str && err == nil
	})
	return t, end, ok && t.Type == mcp.ContentTypeText
}

// readMembers calls f with each of fields, the members of an object of
// the message, that encoding/json would decode into the struct field
// names[k]: k and the member's value. It reports false, for encoding/json
// to decode the message instead, when f does, and when the fast path
// cannot be sure to read the object as encoding/json does (see
// memberIndex).
func readMembers(fields []jsonscan.Field, names []string, f func(k int, v []byte) bool) bool {
	var seen uint
	for _, m := range fields {
		k, ok := memberIndex(m.Key, names, &seen)
		if !ok || k >= 0 && !f(k, m.Value) {
			return false
		}
	}
	return true
}

// eachMember is readMembers over the object at data[i], part of a valid
// text, which it reads where it is: f is called with k and the index of
// the member's value, and returns the index past it. Other members are
// skipped. It returns the index past the object.
func eachMember(data []byte, i int, names []string, f func(k, at int) (int, bool)) (int, bool) {
	var seen uint
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for i < len(data) && data[i] == '"' {
		ke := jsonscan.SkipString(data, i)
		k, ok := memberIndex(data[i+1:ke-1], names, &seen)
		if !ok {
			return 0, false
		}
		at := jsonscan.SkipSpace(data, jsonscan.SkipSpace(data, ke)+1) // past ':'
		if at >= len(data) {
			return 0, false
		}
		var end int
		if k < 0 {
			end = jsonscan.SkipValue(data, at)
		} else if end, ok = f(k, at); !ok {
			return 0, false
		}
		if i = jsonscan.SkipSpace(data, end); i < len(data) && data[i] == '}' {
			return i + 1, true
		}
		i = jsonscan.SkipSpace(data, i+1) // past ','
	}
	return 0, false
}

// memberIndex returns the index in names of the struct field that
// encoding/json would decode the member key into, or -1 for none, and
// notes it in seen. It reports false when the fast path cannot be sure to
// read the object as encoding/json does: a key that names a field a
// second time (encoding/json decodes into it twice), a key that is not
// plain ASCII (encoding/json matches escapes and some non-ASCII letters
// to ASCII names). (Nesting needs no check: jsonscan.Valid refuses what
// encoding/json would.)
func memberIndex(key []byte, names []string, seen *uint) (int, bool) {
	if !plainKey(key) {
		return 0, false
	}
	k := slices.IndexFunc(names, func(name string) bool { return bytes.EqualFold(key, []byte(name)) })
	switch {
	case k < 0:
		return -1, true
	case *seen&(1<<k) != 0:
		return 0, false
	}
	*seen |= 1 << k
	return k, true
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
