package jqsandbox

import (
	"bytes"
	"unicode/utf8"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/jsonvalue"
)

// projDecoder decodes a record line with a projection: the kept values
// are decoded by the records' own jsonvalue.Decoder, the others only
// skipped. Results must not depend on the projection, and they print
// objects in the key order of the whole file (order.go): so the key
// sequence of every object of the line, skipped or not, is recorded in
// the decoder's KeyOrders at the moment, and in the order, that decoding
// the whole line would record it (after its members, left to right).
// A sequence not met before is recorded by decoding a small object with
// the same keys; that happens a few times a file.
//
// It validates the line as jsonscan.Valid would, in the same pass (see
// project_scan.go), and handles valid lines whose objects on kept paths
// have keys without escapes, nested at most maxProjDepth deep; for
// anything else decode reports false and the caller decodes the line
// whole, then projects it (or reports why it is not JSON).
type projDecoder struct {
	root *projNode
	dec  *jsonvalue.Decoder

	keys  [][]byte            // raw keys of the objects being read
	seen  map[string]struct{} // key sequences recorded, raw, joined by NUL
	raw   []byte
	bytes int64 // estimate of the decoded size
	// recent holds key sequences (as in seen) met before, each in the
	// slot of its keyShape. A file's records mostly share a few shapes,
	// and recording a sequence again changes nothing: finding it here
	// spares building and hashing it.
	recent [recentSlots][]byte
	// kids lists the children of the nodes with few of them (see child).
	kids map[*projNode][]kid
}

// kid is a child of a projNode and its key.
type kid struct {
	key  string
	node *projNode
}

// maxListedKids bounds the children that child searches one by one.
const maxListedKids = 8

// recentSlots is the size of projDecoder.recent, a power of two, and
// maxRecentBytes bounds a sequence kept there (so that it holds 64 KiB at
// most).
const (
	recentSlots    = 64
	maxRecentBytes = 1 << 10
)

// keyShape returns the slot of projDecoder.recent for keys (at least
// two): a cheap mix of their count, and of the length and first byte of
// the first and last, which tells most sequences of a file apart.
func keyShape(keys [][]byte) int {
	first, last := keys[0], keys[len(keys)-1]
	h := len(keys)*31 + len(first)*7 + len(last)
	if len(first) > 0 {
		h = h*13 + int(first[0])
	}
	if len(last) > 0 {
		h = h*17 + int(last[0])
	}
	return h & (recentSlots - 1)
}

// maxProjDepth bounds the nesting decode handles, far below jsonvalue's
// limit, so that its failures stay the whole decoder's to report.
const maxProjDepth = 256

// decodeFactor estimates decoded bytes from JSON bytes for values decoded
// whole (4.4 measured for memories).
const decodeFactor = 5

// decode decodes line, validating it as it goes: it reports false for a
// line that is not one valid JSON object (white space around it), which
// the caller then decodes whole for the error, as for one it cannot
// project.
func (d *projDecoder) decode(line []byte) (any, bool) {
	i := jsonscan.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil, false
	}
	v, end, ok := d.object(line, i, d.root, 1)
	if !ok || jsonscan.SkipSpace(line, end) != len(line) {
		return nil, false
	}
	return v, true
}

// object decodes the object at data[i] with the projection n.
func (d *projDecoder) object(data []byte, i int, n *projNode, depth int) (map[string]any, int, bool) {
	if depth > maxProjDepth {
		return nil, i, false
	}
	m := make(map[string]any, len(n.fields))
	d.bytes += 64
	start := len(d.keys)
	defer func() { d.keys = d.keys[:start] }()
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return m, i + 1, true
	}
	for {
		raw, at, ok := member(data, i)
		if !ok {
			return nil, at, false
		}
		d.keys = append(d.keys, raw)
		i = at
		c := d.child(n, raw)
		if c == nil && bytes.IndexByte(raw, '\\') >= 0 {
			return nil, i, false // might name a kept key
		}
		switch {
		case c == nil:
			if i, ok = d.skip(data, i, depth+1, true); !ok {
				return nil, i, false
			}
		case c.whole || data[i] != '{':
			end, ok := d.skip(data, i, depth+1, false)
			if !ok {
				return nil, i, false
			}
			v, ok := d.value(data[i:end])
			if !ok {
				return nil, i, false
			}
			m[c.name] = v
			d.bytes += 32 + decodeFactor*int64(end-i)
			i = end
		default:
			var v map[string]any
			if v, i, ok = d.object(data, i, c, depth+1); !ok {
				return nil, i, false
			}
			m[c.name] = v
			d.bytes += 32
		}
		i, ok = next(data, i, '}')
		switch {
		case !ok:
			return nil, i, false
		case data[i] == '}':
			d.record(d.keys[start:])
			return m, i + 1, true
		}
		i++
	}
}

// value decodes a kept value, valid JSON. A string without escapes, in
// valid UTF-8, is its own bytes (jsonvalue would decode it so, after
// more setup than the copy takes); anything else is the decoder's.
func (d *projDecoder) value(v []byte) (any, bool) {
	if v[0] == '"' {
		if s := v[1 : len(v)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
			return string(s), true
		}
	}
	x, err := d.dec.Decode(v)
	return x, err == nil
}

// child returns the child of n kept under the raw key, or nil. A few
// names compared one by one cost less than hashing the key for a map
// lookup, and most keys of a record are not kept.
func (d *projDecoder) child(n *projNode, raw []byte) *projNode {
	if len(n.fields) > maxListedKids {
		return n.fields[string(raw)]
	}
	kids, ok := d.kids[n]
	if !ok {
		if d.kids == nil {
			d.kids = map[*projNode][]kid{}
		}
		for k, c := range n.fields {
			kids = append(kids, kid{k, c})
		}
		d.kids[n] = kids
	}
	for _, c := range kids {
		if c.key == string(raw) {
			return c.node
		}
	}
	return nil
}

// skip validates the value at data[i] and returns its end, recording
// the key sequences of its objects when rec is set. It reports false for
// what is not valid JSON, or nests too deep.
func (d *projDecoder) skip(data []byte, i, depth int, rec bool) (int, bool) {
	if depth > maxProjDepth {
		return i, false
	}
	switch c := data[i]; {
	case c == '"':
		return scanString(data, i)
	case c == '-' || '0' <= c && c <= '9':
		return jsonscan.ValidNumber(data, i)
	case c == 't':
		return scanWord(data, i, "true")
	case c == 'f':
		return scanWord(data, i, "false")
	case c == 'n':
		return scanWord(data, i, "null")
	case c == '{':
		return d.skipObject(data, i, depth, rec)
	case c == '[':
		return d.skipArray(data, i, depth, rec)
	}
	return i, false
}

// skipObject is skip of an object.
func (d *projDecoder) skipObject(data []byte, i, depth int, rec bool) (int, bool) {
	start := len(d.keys)
	defer func() { d.keys = d.keys[:start] }()
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		raw, at, ok := member(data, i)
		if !ok {
			return at, false
		}
		d.keys = append(d.keys, raw)
		if i, ok = d.skip(data, at, depth+1, rec); !ok {
			return i, false
		}
		if i, ok = next(data, i, '}'); !ok {
			return i, false
		}
		if data[i] == '}' {
			if rec {
				d.record(d.keys[start:])
			}
			return i + 1, true
		}
		i++
	}
}

// skipArray is skip of an array.
func (d *projDecoder) skipArray(data []byte, i, depth int, rec bool) (int, bool) {
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		i = jsonscan.SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		var ok bool
		if i, ok = d.skip(data, i, depth+1, rec); !ok {
			return i, false
		}
		if i, ok = next(data, i, ']'); !ok {
			return i, false
		}
		if data[i] == ']' {
			return i + 1, true
		}
		i++
	}
}

// record records the key sequence of an object (raw keys), as decoding
// it would, unless it was recorded before.
func (d *projDecoder) record(keys [][]byte) {
	if len(keys) < 2 || d.dec.Orders == nil {
		return
	}
	slot := keyShape(keys)
	if sameKeys(d.recent[slot], keys) {
		return
	}
	d.raw = d.raw[:0]
	for _, k := range keys {
		d.raw = append(append(d.raw, k...), 0)
	}
	if len(d.raw) <= maxRecentBytes {
		d.recent[slot] = append(d.recent[slot][:0], d.raw...)
	}
	if _, ok := d.seen[string(d.raw)]; ok {
		return
	}
	if d.seen == nil {
		d.seen = map[string]struct{}{}
	}
	if len(d.seen) < 4096 {
		d.seen[string(d.raw)] = struct{}{}
	}
	// {"k1":0,"k2":0,...}: the raw keys are valid JSON string contents.
	d.raw = append(d.raw[:0], '{')
	for i, k := range keys {
		if i > 0 {
			d.raw = append(d.raw, ',')
		}
		d.raw = append(append(append(d.raw, '"'), k...), `":0`...)
	}
	d.raw = append(d.raw, '}')
	d.dec.Decode(d.raw) //nolint:errcheck // valid by construction
}

// sameKeys reports whether joined holds keys, each followed by a NUL.
func sameKeys(joined []byte, keys [][]byte) bool {
	if len(joined) == 0 {
		return false
	}
	for _, k := range keys {
		if len(joined) <= len(k) || !bytes.Equal(joined[:len(k)], k) || joined[len(k)] != 0 {
			return false
		}
		joined = joined[len(k)+1:]
	}
	return len(joined) == 0
}
