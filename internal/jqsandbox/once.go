package jqsandbox

import (
	"bytes"
	"slices"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/jsonscan"
)

// A onceCheck belongs to a query that, run on a record, yields exactly one
// output, without error, whenever the record passes the check: a path
// (.title), an object or array of paths ({id, title}, [.a, .b]) or such an
// array formatted (@tsv, @csv). Once the output is full, the records that
// follow need not be decoded, nor the query run, to count its results:
// a record that passes counts one, and only the others are evaluated (an
// error there stops the count, as it would have). The check is cheap: the
// record is one JSON object, and the keys whose values a format reads
// are not arrays or objects (formatJoin's errors).
//
// The count stays exact for any input: what the check cannot be sure of
// (a key written with escapes, a key given twice) fails it.
type onceCheck struct {
	scalars []string // sorted top-level keys that must not hold an array or an object
}

// Skims reports whether the query, in mode, yields one result per record
// that passes a cheap check of its line (see onceCheck): a path, an object
// or array of paths, such an array as @tsv or @csv. Once its output is
// full it counts the rest from their lines, without decoding them: such a
// query of a file reads little more than what it shows, and a cache gains
// nothing by decoding the file for it beforehand.
func (q *Query) Skims(mode Mode) bool { return mode == Stream && q.once != nil }

// onceOf returns the check of a query in Stream mode, or nil when the
// analysis cannot prove one output per record: anything that selects,
// iterates, branches, fails or calls a function is left to be evaluated.
func onceOf(q *gojq.Query) *onceCheck {
	if q == nil || len(q.FuncDefs) > 0 || len(q.Imports) > 0 || q.Meta != nil {
		return nil
	}
	if q.Op == gojq.OpPipe && len(q.Patterns) == 0 {
		// [paths] | @tsv: the formats fail on an array or object cell.
		keys, ok := formattedRow(q.Left, q.Right)
		if !ok {
			return nil
		}
		slices.Sort(keys)
		return &onceCheck{scalars: slices.Compact(keys)}
	}
	if q.Op != 0 || q.Term == nil || len(q.Term.SuffixList) > 0 {
		return nil
	}
	switch t := q.Term; t.Type {
	case gojq.TermTypeObject:
		if !onceObject(t.Object) {
			return nil
		}
	case gojq.TermTypeArray:
		if _, ok := onceItems(t.Array.Query, nil); !ok {
			return nil
		}
	default:
		if _, ok := onceLeaf(q); !ok {
			return nil
		}
	}
	return &onceCheck{}
}

// formattedRow reports whether left | right is [items] | @tsv or @csv, and
// returns the keys the items read.
func formattedRow(left, right *gojq.Query) ([]string, bool) {
	if right == nil || right.Op != 0 || right.Term == nil || len(right.FuncDefs) > 0 {
		return nil, false
	}
	f := right.Term
	if f.Type != gojq.TermTypeFormat || f.Str != nil || len(f.SuffixList) > 0 || f.Format != "@tsv" && f.Format != "@csv" {
		return nil, false
	}
	if left == nil || left.Op != 0 || left.Term == nil || len(left.FuncDefs) > 0 {
		return nil, false
	}
	a := left.Term
	if a.Type != gojq.TermTypeArray || len(a.SuffixList) > 0 {
		return nil, false
	}
	return onceItems(a.Array.Query, []string{})
}

// onceItems reports whether q, an array's contents, is a comma list of
// leaves (one value each), and appends to keys the keys they read.
func onceItems(q *gojq.Query, keys []string) ([]string, bool) {
	if q == nil {
		return keys, true // []
	}
	if q.Op == gojq.OpComma && len(q.FuncDefs) == 0 {
		keys, ok := onceItems(q.Left, keys)
		if !ok {
			return nil, false
		}
		return onceItems(q.Right, keys)
	}
	key, ok := onceLeaf(q)
	if !ok {
		return nil, false
	}
	if key != "" {
		keys = append(keys, key)
	}
	return keys, true
}

// onceObject reports whether every member of o is {name}, {name: leaf} or
// {"name": leaf}: one object per record.
func onceObject(o *gojq.Object) bool {
	for _, kv := range o.KeyVals {
		switch {
		case kv.KeyQuery != nil:
			return false
		case kv.KeyString != nil && len(kv.KeyString.Queries) > 0:
			return false
		case kv.Key != "" && kv.Key[0] == '$':
			return false
		}
		if kv.Val != nil {
			if _, ok := onceLeaf(kv.Val); !ok {
				return false
			}
		}
	}
	return true
}

// onceLeaf reports whether q yields one value of any object without error:
// ., .name, ."name", .["name"], or a literal; key is the name read.
func onceLeaf(q *gojq.Query) (key string, ok bool) {
	if q.Op != 0 || q.Term == nil || len(q.FuncDefs) > 0 || len(q.Term.SuffixList) > 0 {
		return "", false
	}
	switch t := q.Term; t.Type {
	case gojq.TermTypeIdentity, gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber:
		return "", true
	case gojq.TermTypeString:
		return "", len(t.Str.Queries) == 0
	case gojq.TermTypeIndex:
		x := t.Index
		switch {
		case x.IsSlice:
		case x.Name != "":
			return x.Name, true
		case x.Str != nil && len(x.Str.Queries) == 0:
			return x.Str.Str, true
		case x.Start != nil && x.End == nil:
			if s := constString(x.Start); s != nil {
				return *s, true
			}
		}
	}
	return "", false
}

// passes reports whether a record's line is one valid JSON object whose
// scalar keys hold no array or object. Keys with escapes and repeated
// keys fail it: the decoder would read them otherwise than a comparison
// of bytes. A line that fails is decoded and evaluated: an invalid line
// is then reported as it would have been. fields is a buffer, returned
// for the next call.
func (c *onceCheck) passes(line []byte, fields []jsonscan.Field) (bool, []jsonscan.Field) {
	i := jsonscan.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false, fields
	}
	if len(c.scalars) == 0 {
		return jsonscan.Valid(line), fields
	}
	fields, ok := jsonscan.AppendValidFields(fields, line)
	if !ok || fields == nil || len(c.scalars) > 64 {
		return false, fields // invalid, or too wide for the check
	}
	var seen uint64 // bit k: scalars[k] met
	for _, f := range fields {
		if bytes.IndexByte(f.Key, '\\') >= 0 {
			return false, fields
		}
		if k := c.scalar(f.Key); k >= 0 {
			if seen&(1<<k) != 0 || f.Value[0] == '{' || f.Value[0] == '[' {
				return false, fields
			}
			seen |= 1 << k
		}
	}
	return true, fields
}

// scalar returns the index of key in c.scalars, or -1.
func (c *onceCheck) scalar(key []byte) int {
	for k, s := range c.scalars {
		if string(key) == s {
			return k
		}
	}
	return -1
}

// passesValue reports whether a decoded record passes: an object whose
// scalar keys hold no array or object.
func (c *onceCheck) passesValue(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range c.scalars {
		switch m[k].(type) {
		case []any, map[string]any:
			return false
		}
	}
	return true
}
