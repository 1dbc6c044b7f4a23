package proxy

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/mcplro/lro/internal/jsonscan"
)

// The server's notifications reach the client's context too (a client
// shows a log message to the model, or keeps it), and they came whole: a
// notifications/message of 2 MB reached the client at 2 MB, one of 50 MB
// at 51 MB. The proxy cuts every notification of the server larger than
// MaxNotificationBytes, on both paths (a local server's line, a remote's
// server-sent event, before mcp-go decodes it), to a notification of the
// same method that is still what its method says:
//
//   - the members of its params are kept whole, the smallest first, while
//     they fit; those that do not (a log message's data, a progress
//     message) become strings that hold the head of what they were (of a
//     string, its text; of anything else, its JSON) and end with a marker
//     that says how large the notification was and which limit cut it;
//   - its params' _meta says so too, under cutMetaKey: the notification's
//     size and the limit.
//
// A notification that cannot be cut so (not JSON, or a limit too small
// for even its method) is dropped, and the proxy logs that it did.

// DefaultMaxNotificationBytes is the largest notification of the server
// the proxy passes on whole unless [Config.MaxNotificationBytes] says
// otherwise: 64 KiB, some 16,000 tokens of a log line or progress
// message, more than a client shows.
const DefaultMaxNotificationBytes = 64 << 10

// cutMetaKey is the member of a cut notification's params._meta that says
// it was cut: {"bytes": its size, "limit": the limit}.
const cutMetaKey = "io.github.mcplro/cut"

// cutNotification returns msg, a notification of the server larger than
// limit bytes, cut to at most limit bytes (see the top of this file), or
// nil when it cannot be.
func cutNotification(msg []byte, limit int64) []byte {
	top, ok := jsonscan.ValidFields(msg)
	if !ok || top == nil {
		return nil
	}
	var method, params []byte
	for _, f := range top {
		switch string(f.Key) {
		case "method":
			method = f.Value
		case "params":
			params = f.Value
		}
	}
	if len(method) == 0 || method[0] != '"' {
		return nil
	}
	marker := fmt.Sprintf(" [… cut by lro-proxy: the notification was %d bytes, over the proxy's limit of %s (MaxNotificationBytes; lro-proxy -max-notification-bytes)]", len(msg), proxySize(limit))
	flag := fmt.Appendf(nil, `%q:{"bytes":%d,"limit":%d}`, cutMetaKey, len(msg), limit)

	b := make([]byte, 0, min(limit, int64(len(msg)))+int64(len(marker)))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = append(b, method...)
	b = append(b, `,"params":{"_meta":{`...)
	b = append(b, flag...)
	var members []jsonscan.Field
	if len(params) > 0 && params[0] == '{' {
		_ = jsonscan.Fields(params, func(f jsonscan.Field) bool {
			if string(f.Key) == "_meta" {
				if len(f.Value) > 2 && f.Value[0] == '{' && len(f.Value) <= int(limit)/16 {
					// A small _meta keeps its members, after the flag.
					b = append(append(b, ','), bytes.TrimSpace(f.Value[1:len(f.Value)-1])...)
				}
				return true
			}
			members = append(members, f)
			return true
		})
	}
	b = append(b, '}')
	room := int(limit) - len(b) - len("}}")
	for _, f := range members {
		room -= len(f.Key) + len(`,"":`)
	}
	// The smallest members are kept whole while they fit; the others share
	// what is left, each cut to a string ending with the marker.
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(len(members[i].Value), len(members[j].Value)) })
	whole := make([]bool, len(members))
	cut := len(members)
	for _, i := range order {
		if len(members[i].Value) > room-(cut-1)*(len(marker)+2) {
			break
		}
		whole[i] = true
		room -= len(members[i].Value)
		cut--
	}
	for i, f := range members {
		b = append(b, ',')
		b = append(b, '"')
		b = append(b, f.Key...)
		b = append(b, `":`...)
		if whole[i] {
			b = append(b, f.Value...)
			continue
		}
		share := room / cut
		b = appendCut(b, f.Value, share-len(marker)-2, marker)
	}
	b = append(b, "}}"...)
	if int64(len(b)) > limit {
		return nil
	}
	return b
}

// appendCut appends to b a JSON string of at most n bytes of the value v
// (of a string, its text as written; of anything else, its JSON quoted),
// cut where a character or an escape ends, followed by marker (which
// holds nothing JSON escapes).
func appendCut(b, v []byte, n int, marker string) []byte {
	n = max(n, 0)
	text := v[1 : len(v)-1]
	if v[0] != '"' {
		head := v[:min(len(v), n)]
		for len(head) > 0 && len(head) < len(v) && !utf8.RuneStart(v[len(head)]) {
			head = head[:len(head)-1] // not into a character
		}
		q := jsonscan.AppendQuoted(make([]byte, 0, len(head)+2), head)
		text = q[1 : len(q)-1]
	}
	b = append(b, '"')
	b = append(b, escapedHead(text, n)...)
	b = append(b, marker...)
	return append(b, '"')
}

// escapedHead returns the longest head of s, the text of a valid JSON
// string as written, of at most n bytes that ends where a character or
// an escape does.
func escapedHead(s []byte, n int) []byte {
	if len(s) <= n {
		return s
	}
	i := 0
	for i < n {
		step := 1
		switch c := s[i]; {
		case c == '\\' && s[i+1] == 'u':
			step = 6
		case c == '\\':
			step = 2
		case c >= utf8.RuneSelf:
			_, step = utf8.DecodeRune(s[i:])
		}
		if i+step > n {
			break
		}
		i += step
	}
	return s[:i]
}

// isNotification reports whether msg, a message of the server, is a
// notification: a method, and no id.
func isNotification(msg []byte) bool {
	id, method, _, ok := peekHeader(msg)
	return ok && method != nil && (len(id) == 0 || string(id) == "null")
}

// boundNotification returns msg, a notification of the server larger than
// MaxNotificationBytes, cut (see cutNotification); or nil, having logged
// why, when it cannot be cut and is dropped.
func (p *Proxy) boundNotification(msg []byte) []byte {
	out := cutNotification(msg, p.lim.notify)
	_, method, _, _ := peekHeader(msg)
	name := proxyClip(methodName(method), 100)
	if out == nil {
		p.warnOnce("notification dropped", "lro proxy: a notification of the server larger than MaxNotificationBytes cannot be cut (not JSON, or the limit is too small for it); dropped", "server", p.upstream(), "method", name, "bytes", len(msg), "limit", p.lim.notify)
		return nil
	}
	p.warnOnce("notification cut", "lro proxy: a notification of the server larger than MaxNotificationBytes was cut (said once)", "server", p.upstream(), "method", name, "bytes", len(msg), "limit", p.lim.notify)
	return out
}
