package recipes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/records"
)

// Sample is how many records inference reads. Fields that appear only
// after that many records are left out of the schema and the recipes, which
// then mention only what certainly exists.
const Sample = 2000

// Shape is what inference learned about generic records.
type Shape struct {
	n      int               // records sampled
	kind   string            // JSON type of the records themselves
	fields map[string]*field // top-level fields, for object records
	order  []string          // field names in first-seen order
	any    words             // a search term of any string value, at any depth
}

type field struct {
	name    string
	seen    int            // records that have the field
	last    int            // the last record that had it, counted from 1
	types   map[string]int // JSON type -> count
	strLen  int            // total length of string values
	elemStr bool           // an array whose elements are strings
	// values counts the distinct values of a string, integer or boolean
	// field (strings decoded, others as JSON text) while they are few and
	// short; nil once they are not.
	values map[string]*int
	// distinct holds a hash of each of the first maxKeySample values, the
	// same way, while no two are equal and all are short; nil once not. A
	// field whose values differ is a key that finds one record.
	distinct map[uint64]struct{}
	first    string // the first value, as values holds it
	words    words  // a string field's search term (see words.go)
	elem     string // a list's first string element, when short
}

func jsonType(v []byte) string {
	if len(v) == 0 {
		return "null"
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if slices.ContainsFunc(v, func(c byte) bool { return c == '.' || c == 'e' || c == 'E' }) {
		return "number"
	}
	return "integer"
}

const (
	maxDistinct  = 50  // values a field may have to be counted by
	maxValueLen  = 64  // length of a value worth counting or filtering by
	maxKeySample = 256 // values that must all differ in a key
)

func Infer(records []json.RawMessage) *Shape {
	s := NewShape()
	for _, r := range records[:min(len(records), Sample)] {
		s.add(r)
	}
	return s
}

func NewShape() *Shape { return &Shape{fields: make(map[string]*field)} }

// Bounds on what inference copies into a descriptor: a field name longer
// than maxFieldName is left out of the schema and the recipes (they still
// hold the records whole; lro_extract reads every field), and so is any
// field past the first maxFields of a record type.
const (
	maxFieldName = 128
	maxFields    = 64
)

// add learns one record.
func (s *Shape) add(r []byte) {
	s.n++
	t := jsonType(r)
	switch {
	case s.kind == "":
		s.kind = t
	case s.kind != t && numeric(s.kind) && numeric(t):
		s.kind = "number"
	case s.kind != t:
		s.kind = "mixed"
	}
	s.any.addRecord(r)
	if t != "object" {
		return
	}
	_ = jsonscan.Fields(r, func(kv jsonscan.Field) bool {
		if len(kv.Key) > maxFieldName {
			return true
		}
		f := s.fields[string(kv.Key)] // found without allocating, when the key has no escapes
		if f == nil {
			name, ok := decodeKey(kv.Key)
			if !ok {
				return true
			}
			if f = s.fields[name]; f == nil {
				if len(s.fields) >= maxFields {
					return true
				}
				f = &field{name: name, types: map[string]int{}, values: map[string]*int{}, distinct: map[uint64]struct{}{}}
				s.fields[name] = f
				s.order = append(s.order, name)
			}
		}
		if f.last != s.n {
			f.seen++
			f.last = s.n
		}
		f.add(kv.Value)
		return true
	})
}

func numeric(t string) bool { return t == "integer" || t == "number" }

// decodeKey returns the text of an object key as it appears between quotes.
func decodeKey(raw []byte) (string, bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	var name string
	err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &name)
	return name, err == nil
}

// add records one value of f.
func (f *field) add(v []byte) {
	t := jsonType(v)
	f.types[t]++
	first := len(f.types) == 1 && f.types[t] == 1
	var text []byte // the value as values and distinct hold it
	countable := false
	switch t {
	case "string":
		f.strLen += len(v) - 2
		f.words.addString(v)
		if !first && f.values == nil && f.distinct == nil {
			return
		}
		if len(v) > 6*maxValueLen+2 {
			// Too long to count, however it is escaped: never decoded.
			f.values, f.distinct = nil, nil
			return
		}
		if str, ok := jsonscan.String(v); ok {
			text, countable = str, true
		} else {
			var s string
			countable = json.Unmarshal(v, &s) == nil
			text = []byte(s)
		}
		countable = countable && len(text) <= maxValueLen
	case "integer", "boolean":
		text, countable = v, len(v) <= maxValueLen
	case "array":
		_ = jsonscan.EachElement(v, func(el []byte) bool {
			f.elemStr = jsonType(el) == "string"
			if str, ok := jsonscan.String(el); ok && f.elem == "" && len(str) <= maxValueLen {
				f.elem = string(str)
			}
			return false // the first element says
		})
	}
	if first && len(text) <= maxValueLen {
		f.first = string(text)
	}
	if !countable {
		f.values, f.distinct = nil, nil
		return
	}
	if f.values != nil {
		if n := f.values[string(text)]; n != nil {
			*n++
		} else if len(f.values) < maxDistinct {
			one := 1
			f.values[string(text)] = &one
		} else {
			f.values = nil
		}
	}
	if f.distinct != nil && len(f.distinct) < maxKeySample {
		h := maphash.Bytes(hashSeed, text)
		if _, dup := f.distinct[h]; dup {
			f.distinct = nil
		} else {
			f.distinct[h] = struct{}{}
		}
	}
}

var hashSeed = maphash.MakeSeed()

// only reports the single type f has, or "". Integers and other numbers
// are one type, "number", when both occur.
func (f *field) only() string {
	switch {
	case len(f.types) == 1:
		for t := range f.types {
			return t
		}
	case len(f.types) == 2 && f.types["integer"] > 0 && f.types["number"] > 0:
		return "number"
	}
	return ""
}

// maxSchemaBytes bounds the properties and required names of an inferred
// line schema: when they do not fit, the schema lists the fields that fit
// without required, in first-seen order, and counts the others in a
// "$comment" that ends with the cut marker, so that a descriptor keeps to
// its 700 tokens whatever the keys (64 fields of 128-byte names made a
// 22 KB descriptor).
const maxSchemaBytes = 300

// schemaType is the JSON Schema of f's values.
func (f *field) schemaType() string {
	types := make([]string, 0, len(f.types))
	for t := range f.types {
		types = append(types, t)
	}
	slices.Sort(types)
	switch {
	case len(types) == 1 && types[0] == "array" && f.elemStr:
		return `{"type":"array","items":{"type":"string"}}`
	case len(types) == 1:
		return fmt.Sprintf(`{"type":%q}`, types[0])
	}
	t, _ := records.MarshalText(types)
	return fmt.Sprintf(`{"type":%s}`, t)
}

// Schema returns the JSON Schema of one record, within maxSchemaBytes.
func (s *Shape) Schema() json.RawMessage {
	var b strings.Builder
	if s.kind != "object" {
		typ := s.kind
		if typ == "mixed" || typ == "" {
			return json.RawMessage(`{}`)
		}
		fmt.Fprintf(&b, `{"type":%q}`, typ)
		return json.RawMessage(b.String())
	}
	// Every field with required, when that fits; otherwise the fields
	// that fit without it, and a count of the others.
	props := make([]string, len(s.order))
	var req []string
	size, reqSize := 0, 0
	for i, name := range s.order {
		key, _ := records.MarshalText(name)
		props[i] = string(key) + ":" + s.fields[name].schemaType()
		size += len(props[i]) + 1
		if s.fields[name].seen == s.n {
			req = append(req, name)
			reqSize += len(key) + 1
		}
	}
	shown := len(props)
	if size+reqSize > maxSchemaBytes {
		req, size = nil, 0
		for i, p := range props {
			if size+len(p)+1 > maxSchemaBytes {
				shown = i
				break
			}
			size += len(p) + 1
		}
	}
	b.WriteString(`{"type":"object","properties":{`)
	b.WriteString(strings.Join(props[:shown], ","))
	b.WriteString(`}`)
	if left := len(props) - shown; left > 0 {
		fmt.Fprintf(&b, `,"$comment":"%d more fields left out%s"`, left, records.CutMarker)
	}
	if len(req) > 0 {
		r, _ := records.MarshalText(req)
		fmt.Fprintf(&b, `,"required":%s`, r)
	}
	b.WriteString(`}`)
	return json.RawMessage(b.String())
}
