// Package jsonscan slices values out of JSON text without decoding it.
//
// The offload path handles results of many megabytes. Decoding them into
// []json.RawMessage copies every byte; slicing the input instead keeps the
// allocation per offload proportional to the number of records, not their
// size. Every function here expects text that json.Valid accepts: callers
// validate once, and the scanner then only needs to find boundaries.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
)

// ErrNotArray is returned by Elements when the text is not a JSON array.
var ErrNotArray = errors.New("jsonscan: not a JSON array")

// ErrNotObject is returned by Fields when the text is not a JSON object.
var ErrNotObject = errors.New("jsonscan: not a JSON object")

// Elements returns the elements of the JSON array in data, each a subslice
// of data with surrounding white space removed.
func Elements(data []byte) ([][]byte, error) {
	out := [][]byte{}
	err := EachElement(data, func(el []byte) bool { out = append(out, el); return true })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Field is one member of a JSON object: the decoded-free key text (without
// quotes, escapes left as they are) and the raw value.
type Field struct {
	Key   []byte
	Value []byte
}

// Fields calls yield for each top-level member of the JSON object in data,
// in order, until yield returns false.
func Fields(data []byte, yield func(Field) bool) error {
	i, err := objectStart(data)
	if err != nil {
		return err
	}
	for {
		var f Field
		if f, i = nextField(data, i); f.Key == nil || !yield(f) {
			return nil
		}
	}
}

// objectStart returns the index of the first member of the object in data.
func objectStart(data []byte) (int, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, ErrNotObject
	}
	return skipSpace(data, i+1), nil
}

// nextField returns the member starting at data[i] and the index of the
// next one; a nil Key means there are no more members.
func nextField(data []byte, i int) (Field, int) {
	if i >= len(data) || data[i] != '"' {
		return Field{}, i
	}
	keyEnd := skipString(data, i)
	key := data[i+1 : keyEnd-1]
	i = skipSpace(data, keyEnd)
	i = skipSpace(data, i+1) // past ':'
	end := skipValue(data, i)
	f := Field{Key: key, Value: data[i:end]}
	i = skipSpace(data, end)
	if i < len(data) && data[i] == ',' {
		i = skipSpace(data, i+1)
	}
	return f, i
}

// String returns the contents of a JSON string value that holds no escapes.
// Values with escapes, and values that are not strings, report ok == false;
// callers that need them decode with encoding/json.
func String(value []byte) (s []byte, ok bool) {
	if len(value) < 2 || value[0] != '"' || bytes.IndexByte(value, '\\') >= 0 {
		return nil, false
	}
	return value[1 : len(value)-1], true
}

// HasNewline reports whether data contains a raw line break. In valid JSON
// a raw line break can only be white space between tokens, so a record
// holding one must be compacted before it can be a JSONL line.
func HasNewline(data []byte) bool {
	return bytes.IndexByte(data, '\n') >= 0 || bytes.IndexByte(data, '\r') >= 0
}

// SkipSpace returns the index of the first byte at or after data[i] that
// is not JSON white space. With SkipString and SkipValue it serves
// scanners of their own (a decoder of a few fields) over text known to be
// valid.
func SkipSpace(data []byte, i int) int { return skipSpace(data, i) }

// SkipString returns the index just past the string that starts at
// data[i].
func SkipString(data []byte, i int) int { return skipString(data, i) }

// SkipValue returns the index just past the value that starts at data[i].
func SkipValue(data []byte, i int) int { return skipValue(data, i) }

func skipSpace(data []byte, i int) int {
	if i < len(data) && data[i] > ' ' {
		return i // the usual case: compact JSON
	}
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string that starts at data[i].
// It looks at eight bytes at a time while none is a quote or a backslash
// (as validString does), and goes straight to the first one flagged: most
// strings of a result are short, and a call of bytes.IndexByte per string
// cost more than the scan.
func skipString(data []byte, i int) int {
	i++ // opening quote
	for {
		if i+8 <= len(data) {
			w := binary.LittleEndian.Uint64(data[i:])
			q, b := w^(lows*'"'), w^(lows*'\\')
			m := ((q-lows)&^q | (b-lows)&^b) & highs
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else {
			for i < len(data) && data[i] != '"' && data[i] != '\\' {
				i++
			}
			if i >= len(data) {
				return len(data)
			}
		}
		if data[i] == '"' {
			return i + 1
		}
		i += 2 // an escape: the next byte is never the end
	}
}

// skipValue returns the index just past the value that starts at data[i].
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(data) {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// EachElement calls yield with each element of the JSON array in data, in
// order, until yield returns false. Unlike Elements it holds nothing per
// element, so that an array of a million tiny values costs no memory.
func EachElement(data []byte, yield func(el []byte) bool) error {
	return eachElement(data, "", "", false, func(el Element) bool { return yield(el.Value) })
}

// Element is one element of an array, found by EachPairElement: Value,
// and when Value is an object of exactly the two members asked for, A and
// B, their values.
type Element struct {
	Value []byte
	A, B  []byte
	Pair  bool
}

// EachPairElement is EachElement that also tells, for each element,
// whether it is an object of exactly the members a and b (in either
// order), and their values, reading each element once.
func EachPairElement(data []byte, a, b string, yield func(Element) bool) error {
	return eachElement(data, a, b, true, yield)
}

// eachElement walks the array in data for EachElement and, with pairs,
// EachPairElement.
func eachElement(data []byte, a, b string, pairs bool, yield func(Element) bool) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return ErrNotArray
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return nil
	}
	for i < len(data) {
		var el Element
		end := 0
		if pairs && data[i] == '{' {
			el, end = pairObject(data, i, a, b)
		} else {
			end = skipValue(data, i)
		}
		el.Value = data[i:end]
		if !yield(el) {
			return nil
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] == ']' {
			return nil
		}
		i = skipSpace(data, i+1) // past ','
	}
	return nil
}

// pairObject reads the object at data[i] member by member, and returns
// the index just past it with what it found of the members a and b.
func pairObject(data []byte, i int, a, b string) (Element, int) {
	var el Element
	start := i
	i = skipSpace(data, i+1)
	n := 0
	for {
		var f Field
		if f, i = nextField(data, i); f.Key == nil {
			break
		}
		n++
		switch {
		case string(f.Key) == a && el.A == nil:
			el.A = f.Value
		case string(f.Key) == b && el.B == nil:
			el.B = f.Value
		}
	}
	if i >= len(data) || data[i] != '}' {
		// Not where a member list ends: leave it to skipValue.
		return Element{}, skipValue(data, start)
	}
	el.Pair = n == 2 && el.A != nil && el.B != nil
	if !el.Pair {
		el.A, el.B = nil, nil
	}
	return el, i + 1
}
