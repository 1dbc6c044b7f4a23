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
	"errors"
)

// ErrNotArray is returned by Elements when the text is not a JSON array.
var ErrNotArray = errors.New("jsonscan: not a JSON array")

// ErrNotObject is returned by Fields when the text is not a JSON object.
var ErrNotObject = errors.New("jsonscan: not a JSON object")

// Elements returns the elements of the JSON array in data, each a subslice
// of data with surrounding white space removed.
func Elements(data []byte) ([][]byte, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, ErrNotArray
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return [][]byte{}, nil
	}
	var out [][]byte
	for i < len(data) {
		end := skipValue(data, i)
		out = append(out, data[i:end])
		i = skipSpace(data, end)
		if i >= len(data) || data[i] == ']' {
			break
		}
		i = skipSpace(data, i+1) // past ','
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

// Lookup returns the raw value of the top-level member key of the JSON
// object in data. Keys that contain escapes are compared as written.
// It allocates nothing, which matters when called once per record.
func Lookup(data []byte, key string) (value []byte, ok bool) {
	i, err := objectStart(data)
	if err != nil {
		return nil, false
	}
	for {
		var f Field
		if f, i = nextField(data, i); f.Key == nil {
			return nil, false
		}
		if string(f.Key) == key {
			return f.Value, true
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
func skipString(data []byte, i int) int {
	i++ // opening quote
	for {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data)
		}
		i += j
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for k := i - 1; k >= 0 && data[k] == '\\'; k-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
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
