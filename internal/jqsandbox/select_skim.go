package jqsandbox

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/jsonscan"
)

// selectTest is a select whose condition compares one top-level field
// with a string, select(.f == $v), select(.f != "s") or
// select(.f | startswith($v)): once the output is full, a record's
// result is told from the field's raw text when it is a string without
// escapes (or, for == and !=, anything but a string), with no decoding
// and no query run (see skimmer).
type selectTest struct {
	key string
	op  gojq.Operator // OpEq, OpNe, or 0 for startswith
	// The string compared with: lit, or the variable named variable.
	lit      string
	variable string
}

// selectTestOf returns the select test of a query, or nil.
func selectTestOf(q *gojq.Query) *selectTest {
	t := q.Term
	if t == nil || len(q.FuncDefs) > 0 || t.Type != gojq.TermTypeFunc || len(t.SuffixList) > 0 ||
		t.Func.Name != "select" || len(t.Func.Args) != 1 {
		return nil
	}
	c := t.Func.Args[0]
	if len(c.FuncDefs) > 0 || len(c.Patterns) > 0 {
		return nil
	}
	switch c.Op {
	case gojq.OpEq, gojq.OpNe:
		if s := testOf(c.Left, c.Right, c.Op); s != nil {
			return s
		}
		return testOf(c.Right, c.Left, c.Op) // "s" == .f
	case gojq.OpPipe:
		r := c.Right
		if r == nil || r.Op != 0 || r.Term == nil || len(r.FuncDefs) > 0 || r.Term.Type != gojq.TermTypeFunc ||
			len(r.Term.SuffixList) > 0 || r.Term.Func.Name != "startswith" || len(r.Term.Func.Args) != 1 {
			return nil
		}
		return testOf(c.Left, r.Term.Func.Args[0], 0)
	}
	return nil
}

// testOf returns the test of field op operand: field .f, operand a
// string without interpolation or a variable.
func testOf(field, operand *gojq.Query, op gojq.Operator) *selectTest {
	if field == nil || operand == nil {
		return nil
	}
	key, ok := onceLeaf(field)
	if !ok || key == "" {
		return nil
	}
	if s := constString(operand); s != nil {
		return &selectTest{key: key, op: op, lit: *s}
	}
	t := operand.Term
	if operand.Op != 0 || t == nil || len(operand.FuncDefs) > 0 || t.Type != gojq.TermTypeFunc || len(t.SuffixList) > 0 ||
		len(t.Func.Args) > 0 || !strings.HasPrefix(t.Func.Name, "$") {
		return nil
	}
	return &selectTest{key: key, op: op, variable: t.Func.Name[1:]}
}

// bind returns the check with the variables' values, or nil when the
// operand is not a string (the query must run).
func (s *selectTest) bind(names []string, vars []any) skimmer {
	c := &selectCheck{test: s, with: s.lit, key: []string{s.key}}
	if s.variable != "" {
		i := slices.Index(names, s.variable)
		if i < 0 || i >= len(vars) {
			return nil
		}
		str, ok := vars[i].(string)
		if !ok {
			return nil
		}
		c.with = str
	}
	return c
}

// selectCheck is a selectTest bound to its string.
type selectCheck struct {
	test *selectTest
	with string
	key  []string
}

func (c *selectCheck) keys() []string { return c.key }

// line reads the last member named key (the decoder keeps the last).
func (c *selectCheck) line(line []byte, fields []jsonscan.Field) (int, bool, []jsonscan.Field) {
	fields, ok := objectFields(line, fields)
	if !ok {
		return 0, false, fields
	}
	var v []byte
	for _, f := range fields {
		if string(f.Key) == c.test.key {
			v = f.Value
		}
	}
	if v == nil || v[0] != '"' {
		n, ok := c.notString() // absent (null), or not a string
		return n, ok, fields
	}
	text := v[1 : len(v)-1]
	if bytes.IndexByte(text, '\\') >= 0 || !utf8.Valid(text) {
		return 0, false, fields // the decoder would change it
	}
	return hits(c.test.op, text, c.with), true, fields
}

// members reads the field's decoded value.
func (c *selectCheck) members(vals []any) (int, bool) {
	if s, ok := vals[0].(string); ok {
		return hits(c.test.op, s, c.with), true
	}
	return c.notString()
}

// notString is the record's result when the field is not a string: for
// == and !=, a string never equals another type (absent is null);
// startswith fails on it, which only running the query reports.
func (c *selectCheck) notString() (int, bool) {
	switch c.test.op {
	case gojq.OpEq:
		return 0, true
	case gojq.OpNe:
		return 1, true
	}
	return 0, false
}

// hits is the record's result when the field is the string s, its text
// or its decoded value (neither copied).
func hits[T string | []byte](op gojq.Operator, s T, with string) int {
	var hit bool
	switch op {
	case gojq.OpEq:
		hit = string(s) == with
	case gojq.OpNe:
		hit = string(s) != with
	default:
		hit = len(s) >= len(with) && string(s[:len(with)]) == with
	}
	if hit {
		return 1
	}
	return 0
}
