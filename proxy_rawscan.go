package lro

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// scanRemoteMessage is decodeRemoteMessage's fast path: one validating
// pass over the message, by hand, where encoding/json makes two or three
// (it validates the whole text before decoding it, and scans the
// structured content once more to skip it), which on a large result cost
// more than the rest of the proxy's work. It takes the common shape only:
// a response whose result holds text items and structured content. On
// anything else (a key that is not plain ASCII or that comes twice,
// another kind of content item, deep nesting, a message that is not
// such a response) it returns false, and decodeRemoteMessage decodes the
// message with encoding/json instead; so this path only has to agree with
// encoding/json on the messages it takes, which FuzzScanRemoteMessage
// checks.
func scanRemoteMessage(data []byte) (json.RawMessage, *mcp.CallToolResult, bool) {
	var m struct {
		id, method, errv, result []byte
		seen                     [4]bool
	}
	end, fine := members(data, skipSpace(data, 0), 0, func(key, v []byte) bool {
		var slot *[]byte
		var k int
		switch {
		case bytes.EqualFold(key, []byte("id")):
			slot, k = &m.id, 0
		case bytes.EqualFold(key, []byte("method")):
			slot, k = &m.method, 1
		case bytes.EqualFold(key, []byte("error")):
			slot, k = &m.errv, 2
		case bytes.EqualFold(key, []byte("result")):
			slot, k = &m.result, 3
		default:
			return true
		}
		if m.seen[k] {
			return false // encoding/json merges or replaces: let it
		}
		m.seen[k], *slot = true, v
		return true
	})
	if !fine || skipSpace(data, end) != len(data) || m.method != nil || m.errv != nil || !plainID(m.id) || m.result == nil || m.result[0] != '{' {
		return nil, nil, false
	}
	var r remoteResult
	var content []byte
	var seen [7]bool
	_, fine = members(m.result, 0, 1, func(key, v []byte) bool {
		k := -1
		var err error
		switch {
		case bytes.EqualFold(key, []byte("_meta")):
			k, err = 0, json.Unmarshal(v, &r.Meta)
		case bytes.EqualFold(key, []byte("resultType")):
			k, err = 1, json.Unmarshal(v, &r.ResultType)
		case bytes.EqualFold(key, []byte("content")):
			k, content = 2, v
		case bytes.EqualFold(key, []byte("structuredContent")):
			k, r.Structured = 3, bytes.Clone(v)
		case bytes.EqualFold(key, []byte("isError")):
			k, err = 4, json.Unmarshal(v, &r.IsError)
		case bytes.EqualFold(key, []byte("inputRequests")):
			k, r.InputRequests = 5, v
		case bytes.EqualFold(key, []byte("requestState")):
			k, err = 6, json.Unmarshal(v, &r.RequestState)
		default:
			return true
		}
		if seen[k] || err != nil {
			return false
		}
		seen[k] = true
		return true
	})
	if !fine || content == nil || content[0] != '[' || r.ResultType == mcp.ResultTypeInputRequired || len(r.InputRequests) > 0 {
		return nil, nil, false
	}
	var items []mcp.Content
	fine = elements(content, func(v []byte) bool {
		if v[0] != '{' {
			return false
		}
		var t mcp.TextContent
		var seen [4]bool
		_, ok := members(v, 0, 3, func(key, v []byte) bool {
			k := -1
			var err error
			switch {
			case bytes.EqualFold(key, []byte("type")):
				k, err = 0, json.Unmarshal(v, &t.Type)
			case bytes.EqualFold(key, []byte("text")):
				var ok bool
				k = 1
				if t.Text, ok = unquoteText(v); !ok {
					return false
				}
			case bytes.EqualFold(key, []byte("annotations")):
				k, err = 2, json.Unmarshal(v, &t.Annotations)
			case bytes.EqualFold(key, []byte("_meta")):
				k, err = 3, json.Unmarshal(v, &t.Meta)
			default:
				return true
			}
			if seen[k] || err != nil {
				return false
			}
			seen[k] = true
			return true
		})
		if !ok || t.Type != mcp.ContentTypeText {
			return false
		}
		items = append(items, t)
		return true
	})
	if !fine {
		return nil, nil, false
	}
	return m.id, r.build(items), true
}

// maxScanDepth is as deep as the fast path goes; deeper values go to
// encoding/json, whose limit is 10,000.
const maxScanDepth = 256

// members scans the JSON object at b[i], calling f with each member's key
// (its contents, which must be plain ASCII without escapes) and value; it
// returns the index after the object and whether it was valid and f
// always said true.
func members(b []byte, i, depth int, f func(key, v []byte) bool) (int, bool) {
	if i >= len(b) || b[i] != '{' || depth > maxScanDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		end, esc, ascii := scanString(b, i)
		if end < 0 || esc || !ascii {
			return 0, false
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		vs := skipSpace(b, i+1)
		ve := scanValue(b, vs, depth+1)
		if ve < 0 || !f(key, b[vs:ve]) {
			return 0, false
		}
		i = skipSpace(b, ve)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		return 0, false
	}
}

// elements calls f with each element of the JSON array b, which scanValue
// has checked, and reports whether f always said true.
func elements(b []byte, f func(v []byte) bool) bool {
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == ']' {
		return true
	}
	for {
		ve := scanValue(b, i, 2)
		if ve < 0 || !f(b[i:ve]) {
			return false
		}
		i = skipSpace(b, ve)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		return i < len(b) && b[i] == ']'
	}
}

// scanValue returns the index after the JSON value at b[i], or -1 when it
// is not valid (or nests deeper than maxScanDepth).
func scanValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		end, _, _ := scanString(b, i)
		return end
	case c == '{':
		if depth > maxScanDepth {
			return -1
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return -1
			}
			if i, _, _ = scanString(b, i); i < 0 {
				return -1
			}
			if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
				return -1
			}
			if i = scanValue(b, skipSpace(b, i+1), depth+1); i < 0 {
				return -1
			}
			switch i = skipSpace(b, i); {
			case i < len(b) && b[i] == ',':
				i = skipSpace(b, i+1)
			case i < len(b) && b[i] == '}':
				return i + 1
			default:
				return -1
			}
		}
	case c == '[':
		if depth > maxScanDepth {
			return -1
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1
		}
		for {
			if i = scanValue(b, i, depth+1); i < 0 {
				return -1
			}
			switch i = skipSpace(b, i); {
			case i < len(b) && b[i] == ',':
				i = skipSpace(b, i+1)
			case i < len(b) && b[i] == ']':
				return i + 1
			default:
				return -1
			}
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	default:
		return scanNumber(b, i)
	}
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber returns the index after the JSON number at b[i], or -1.
func scanNumber(b []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(i + 1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digits(i); j > i {
			i = j
		} else {
			return -1
		}
	}
	return i
}

// scanString returns the index after the JSON string at b[i], or -1 when
// it is not valid, whether it holds escapes, and whether it is all ASCII.
func scanString(b []byte, i int) (end int, esc, ascii bool) {
	ascii = true
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, esc, ascii
		case c == '\\':
			esc = true
			i++
			if i >= len(b) {
				return -1, esc, ascii
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if getu4(b[i-1:]) < 0 {
					return -1, esc, ascii
				}
				i += 4
			default:
				return -1, esc, ascii
			}
		case c < ' ':
			return -1, esc, ascii
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return -1, esc, ascii
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// unquoteText decodes the JSON string v, which scanString has checked, as
// encoding/json does: escapes decoded, invalid UTF-8 and lone surrogates
// replaced by U+FFFD. It reports false for a value that is not a string.
func unquoteText(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s), true
	}
	b := make([]byte, 0, len(s))
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			switch e := s[r+1]; e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := getu4(s[r:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != unicode.ReplacementChar {
						b = utf8.AppendRune(b, dec)
						r += 6
						continue
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, e)
			}
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return string(b), true
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
