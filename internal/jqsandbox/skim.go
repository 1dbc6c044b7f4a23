package jqsandbox

import (
	"slices"

	"github.com/mcplro/lro/internal/jsonscan"
)

// A skimmer counts a query's results on a record, once the output is
// full, without decoding the record nor running the query, when a cheap
// look at it can tell: a query with one result per record (onceCheck),
// a select whose condition compares one field with a string
// (selectCheck). Where it cannot tell, the record is decoded and
// evaluated, so that the count stays exact, errors included.
type skimmer interface {
	// line returns the results of the record on line (one JSON value, or
	// not), and false when the query must run to tell; fields is a
	// buffer, returned for the next call.
	line(line []byte, fields []jsonscan.Field) (n int, ok bool, _ []jsonscan.Field)
	// keys returns the top-level keys members reads, sorted.
	keys() []string
	// members is line for a record that is an object whose members
	// named keys() hold vals (absent{} for one it does not have).
	members(vals []any) (n int, ok bool)
}

// skimmer returns the query's skimmer for the values of its variables,
// or nil.
func (q *Query) skimmer(vars []any) skimmer {
	switch {
	case q.once != nil:
		return q.once
	case q.selects != nil:
		return q.selects.bind(q.varNames, vars)
	}
	return nil
}

// objectFields returns the members of the record on line when it is one
// valid JSON object whose keys have no escapes (an escaped key may name
// any key), with fields as the buffer; else false.
func objectFields(line []byte, fields []jsonscan.Field) ([]jsonscan.Field, bool) {
	i := jsonscan.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return fields, false
	}
	fields, ok := jsonscan.AppendValidFields(fields, line)
	if !ok || fields == nil {
		return fields, false // invalid, or too wide to list
	}
	for _, f := range fields {
		if slices.Contains(f.Key, '\\') {
			return fields, false
		}
	}
	return fields, true
}

// skimValue is members for a decoded record; vals is a buffer.
func skimValue(s skimmer, v any, vals []any) (int, bool, []any) {
	m, ok := v.(map[string]any)
	if !ok {
		return 0, false, vals
	}
	vals = vals[:0]
	for _, k := range s.keys() {
		x, found := m[k]
		if !found {
			x = absent{}
		}
		vals = append(vals, x)
	}
	n, ok := s.members(vals)
	return n, ok, vals
}
