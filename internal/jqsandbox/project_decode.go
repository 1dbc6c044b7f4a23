package jqsandbox

import (
	"bytes"

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
// It handles lines that jsonscan.Valid accepted and whose objects on kept
// paths have keys without escapes, nested at most maxProjDepth deep; for
// anything else decode reports false and the caller decodes the line
// whole, then projects it.
type projDecoder struct {
	root *projNode
	dec  *jsonvalue.Decoder

	keys  [][]byte            // raw keys of the objects being read
	seen  map[string]struct{} // key sequences recorded, raw, joined by NUL
	raw   []byte
	bytes int64 // estimate of the decoded size
}

// maxProjDepth bounds the nesting decode handles, far below jsonvalue's
// limit, so that its failures stay the whole decoder's to report.
const maxProjDepth = 256

// decodeFactor estimates decoded bytes from JSON bytes for values decoded
// whole (4.4 measured for memories).
const decodeFactor = 5

func (d *projDecoder) decode(line []byte) (any, bool) {
	i := jsonscan.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil, false
	}
	v, _, ok := d.object(line, i, d.root, 1)
	return v, ok
}

func (d *projDecoder) object(data []byte, i int, n *projNode, depth int) (map[string]any, int, bool) {
	if depth > maxProjDepth {
		return nil, i, false
	}
	m := make(map[string]any, len(n.fields))
	d.bytes += 64
	start := len(d.keys)
	defer func() { d.keys = d.keys[:start] }()
	i = jsonscan.SkipSpace(data, i+1)
	if data[i] == '}' {
		return m, i + 1, true
	}
	for {
		end := jsonscan.SkipString(data, i)
		raw := data[i+1 : end-1]
		d.keys = append(d.keys, raw)
		i = jsonscan.SkipSpace(data, jsonscan.SkipSpace(data, end)+1) // past the colon
		c := n.fields[string(raw)]
		if c == nil && bytes.IndexByte(raw, '\\') >= 0 {
			return nil, i, false // might name a kept key
		}
		var ok bool
		switch {
		case c == nil:
			if i, ok = d.skip(data, i, depth+1); !ok {
				return nil, i, false
			}
		case c.whole || data[i] != '{':
			end, ok := skipPlain(data, i, depth+1)
			if !ok {
				return nil, i, false
			}
			v, err := d.dec.Decode(data[i:end])
			if err != nil {
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
		i = jsonscan.SkipSpace(data, i)
		if data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
			continue
		}
		d.record(d.keys[start:])
		return m, i + 1, true
	}
}

// skip skips the value at data[i], recording the key sequences of its
// objects.
func (d *projDecoder) skip(data []byte, i, depth int) (int, bool) {
	if depth > maxProjDepth {
		return i, false
	}
	switch data[i] {
	case '"':
		return jsonscan.SkipString(data, i), true
	case '{':
		start := len(d.keys)
		defer func() { d.keys = d.keys[:start] }()
		i = jsonscan.SkipSpace(data, i+1)
		if data[i] == '}' {
			return i + 1, true
		}
		for {
			end := jsonscan.SkipString(data, i)
			d.keys = append(d.keys, data[i+1:end-1])
			i = jsonscan.SkipSpace(data, jsonscan.SkipSpace(data, end)+1)
			var ok bool
			if i, ok = d.skip(data, i, depth+1); !ok {
				return i, false
			}
			i = jsonscan.SkipSpace(data, i)
			if data[i] == ',' {
				i = jsonscan.SkipSpace(data, i+1)
				continue
			}
			d.record(d.keys[start:])
			return i + 1, true
		}
	case '[':
		i = jsonscan.SkipSpace(data, i+1)
		if data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = d.skip(data, i, depth+1); !ok {
				return i, false
			}
			i = jsonscan.SkipSpace(data, i)
			if data[i] == ',' {
				i = jsonscan.SkipSpace(data, i+1)
				continue
			}
			return i + 1, true
		}
	}
	return jsonscan.SkipValue(data, i), true
}

// record records the key sequence of an object (raw keys), as decoding
// it would, unless it was recorded before.
func (d *projDecoder) record(keys [][]byte) {
	if len(keys) < 2 || d.dec.Orders == nil {
		return
	}
	d.raw = d.raw[:0]
	for _, k := range keys {
		d.raw = append(append(d.raw, k...), 0)
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

// skipPlain returns the end of the value at data[i] (valid JSON), or
// false when it nests too deep.
func skipPlain(data []byte, i, depth int) (int, bool) {
	switch data[i] {
	case '"':
		return jsonscan.SkipString(data, i), true
	case '{', '[':
		level := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = jsonscan.SkipString(data, i)
				continue
			case '{', '[':
				if level++; depth+level > maxProjDepth {
					return i, false
				}
			case '}', ']':
				if level--; level == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	return jsonscan.SkipValue(data, i), true
}
