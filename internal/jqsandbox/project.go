package jqsandbox

import (
	"maps"
	"slices"
	"strings"

	"github.com/itchyny/gojq"
)

// A Projection is the part of each record a query can read: the records
// may be decoded with only those fields (see DecodeProjected), which
// costs a fraction of decoding them whole when a query reads two fields
// of twenty, and the query answers exactly as it would over whole
// records. The zero Projection is the whole record.
//
// A projection keeps, of each object on a path, only the keys the query
// names; any other value on a path (an array, a string) is kept whole,
// and so is the value at the end of a path the query reads as a whole.
// Records decoded with a projection that covers a query's (Covers) answer
// that query as whole records would. A Projection is immutable.
type Projection struct {
	root *projNode // nil: the whole record
	// lines keeps each projected record's JSONL line too: a query
	// select(f) reads only what f reads of each record, and decodes whole,
	// from its line, only the records it outputs (see lazySelect and
	// Query.CacheProjection).
	lines bool
}

type projNode struct {
	name   string // the key of this node in its parent's fields
	whole  bool
	fields map[string]*projNode
}

// Whole reports whether p keeps the whole record.
func (p Projection) Whole() bool { return p.root == nil || p.root.whole }

// Covers reports whether p keeps everything q keeps, lines included.
func (p Projection) Covers(q Projection) bool {
	if p.Whole() {
		return true
	}
	return !q.Whole() && (p.lines || !q.lines) && covers(p.root, q.root)
}

func covers(a, b *projNode) bool {
	if a.whole {
		return true
	}
	if b.whole {
		return false
	}
	for k, bc := range b.fields {
		ac, ok := a.fields[k]
		if !ok || !covers(ac, bc) {
			return false
		}
	}
	return true
}

// Union returns a projection that keeps what p or q keeps.
func (p Projection) Union(q Projection) Projection {
	if p.Whole() || q.Whole() {
		return Projection{}
	}
	return Projection{root: union(p.root, q.root), lines: p.lines || q.lines}
}

func union(a, b *projNode) *projNode {
	if a.whole || b.whole {
		return &projNode{name: a.name, whole: true}
	}
	n := &projNode{name: a.name, fields: maps.Clone(a.fields)}
	if n.fields == nil {
		n.fields = map[string]*projNode{}
	}
	for k, bc := range b.fields {
		if ac, ok := n.fields[k]; ok {
			n.fields[k] = union(ac, bc)
		} else {
			n.fields[k] = bc
		}
	}
	return n
}

// String describes p for tests and logs: "*" for the whole record, else
// the kept fields, as {a,b:{c}} with * for a field kept whole, followed
// by "+lines" when the lines are kept too.
func (p Projection) String() string {
	if p.Whole() {
		return "*"
	}
	var b strings.Builder
	p.root.write(&b)
	if p.lines {
		b.WriteString("+lines")
	}
	return b.String()
}

func (n *projNode) write(b *strings.Builder) {
	if n.whole {
		b.WriteByte('*')
		return
	}
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(n.fields)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		if c := n.fields[k]; c.whole || len(c.fields) > 0 {
			b.WriteByte(':')
			c.write(b)
		}
	}
	b.WriteByte('}')
}

// Projection returns what the query reads of each record in mode. It is
// the whole record unless the analysis in analyze.go proves less enough.
func (q *Query) Projection(mode Mode) Projection {
	if mode == Slurp {
		return q.slurpProj
	}
	return q.streamProj
}

// lazySort returns, for a query sort_by(f) over the slurped records,
// followed by any of reverse and slices with constant bounds (.[:10],
// .[-3:]), the projection of f alone: f only orders the records, and the
// query outputs an array of them as they are, reordered. The records are
// decoded with that projection and their lines, and only those the
// output shows are decoded whole (see evaluation.addRecords). So does a
// question's program that outputs records (lazyQuestion). For any other
// query it returns the whole record.
func lazySort(query *gojq.Query) Projection {
	if len(query.FuncDefs) > 0 {
		return Projection{}
	}
	if p, ok := lazyQuestion(query); ok {
		return p
	}
	steps, ok := pipeline(query, nil)
	if !ok {
		return Projection{}
	}
	t := steps[0].Term
	if steps[0].Op != 0 || t == nil || t.Type != gojq.TermTypeFunc || len(t.SuffixList) > 0 ||
		t.Func.Name != "sort_by" || len(t.Func.Args) != 1 {
		return Projection{}
	}
	for _, st := range steps[1:] {
		if !reordersOnly(st) {
			return Projection{}
		}
	}
	a := &analyzer{root: &projNode{}}
	a.need(a.query(t.Func.Args[0], []alt{{kind: altRef, node: a.root}}, nil))
	if a.failed || a.root.whole {
		return Projection{}
	}
	return Projection{root: a.root}
}

// pipeline appends the steps of a pipe a | b | c to steps, and reports
// false for a pipe that binds variables.
func pipeline(q *gojq.Query, steps []*gojq.Query) ([]*gojq.Query, bool) {
	if q == nil || q.Op != gojq.OpPipe {
		return append(steps, q), q != nil
	}
	if len(q.Patterns) > 0 || len(q.FuncDefs) > 0 {
		return nil, false
	}
	steps, ok := pipeline(q.Left, steps)
	if !ok {
		return nil, false
	}
	return pipeline(q.Right, steps)
}

// reordersOnly reports whether q is reverse or a slice .[a:b] with
// constant bounds: an array in, some of its elements, as they are, out.
func reordersOnly(q *gojq.Query) bool {
	t := q.Term
	if q.Op != 0 || t == nil || len(t.SuffixList) > 0 || len(q.FuncDefs) > 0 {
		return false
	}
	switch t.Type {
	case gojq.TermTypeFunc:
		return t.Func.Name == "reverse" && len(t.Func.Args) == 0
	case gojq.TermTypeIndex:
		ix := t.Index
		return ix.IsSlice && ix.Name == "" && ix.Str == nil && constantNumber(ix.Start) && constantNumber(ix.End)
	}
	return false
}

// constantNumber reports whether q is absent, a number or a negated one.
func constantNumber(q *gojq.Query) bool {
	if q == nil {
		return true
	}
	t := q.Term
	if q.Op != 0 || t == nil || len(t.SuffixList) > 0 {
		return false
	}
	switch t.Type {
	case gojq.TermTypeNumber:
		return true
	case gojq.TermTypeUnary:
		u := t.Unary
		return u.Op == gojq.OpSub && u.Term != nil && u.Term.Type == gojq.TermTypeNumber && len(u.Term.SuffixList) == 0
	}
	return false
}

// CacheProjection returns what records decoded for this query in mode
// should keep (see DecodeProjected and RunRecords): its Projection, or,
// for a query select(f) in Stream mode, what f reads and each record's
// line, from which the few records the query outputs are decoded whole.
// A file of memories then keeps a field or two of each record and its
// line (several times less memory than its records decoded whole, and
// several times less time to decode), and answers every select on those
// fields.
func (q *Query) CacheProjection(mode Mode) Projection {
	if mode == Stream && !q.selectProj.Whole() {
		return Projection{root: q.selectProj.root, lines: true}
	}
	if mode == Slurp && !q.sortProj.Whole() {
		return Projection{root: q.sortProj.root, lines: true}
	}
	return q.Projection(mode)
}

// project returns the projection of query in mode (query is not
// modified), the whole record when it cannot tell.
func project(query *gojq.Query, mode Mode) Projection {
	a := &analyzer{root: &projNode{}}
	in := []alt{{kind: altRef, node: a.root}}
	if mode == Slurp {
		in = []alt{{kind: altArray, elem: in}}
	}
	a.need(a.query(query, in, nil))
	if a.failed || a.root.whole {
		return Projection{}
	}
	return Projection{root: a.root}
}

// projectValue returns v as a projection of node keeps it: the same value
// for a whole node or a value that is not an object, else an object of
// the kept keys, each projected.
func projectValue(v any, n *projNode) any {
	m, ok := v.(map[string]any)
	if n.whole || !ok {
		return v
	}
	out := make(map[string]any, len(n.fields))
	for k, c := range n.fields {
		if x, ok := m[k]; ok {
			out[k] = projectValue(x, c)
		}
	}
	return out
}

// lazySelect returns, for a query select(f), the projection of f alone:
// f only tests a record, and the query outputs the record itself. A stream
// of such a query decodes each record with that projection, and decodes
// whole only the records it outputs (most queries output few). For any
// other query it returns the whole record.
func lazySelect(query *gojq.Query) Projection {
	t := query.Term
	if t == nil || len(query.FuncDefs) > 0 || t.Type != gojq.TermTypeFunc || len(t.SuffixList) > 0 ||
		t.Func.Name != "select" || len(t.Func.Args) != 1 {
		return Projection{}
	}
	a := &analyzer{root: &projNode{}}
	a.query(t.Func.Args[0], []alt{{kind: altRef, node: a.root}}, nil)
	if a.failed || a.root.whole {
		return Projection{}
	}
	return Projection{root: a.root}
}
