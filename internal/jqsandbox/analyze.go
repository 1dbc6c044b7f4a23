package jqsandbox

import "github.com/itchyny/gojq"

// The analyzer follows a query's syntax tree with abstract values, to find
// which fields of a record the query can observe. A value is one of:
//
//   - a reference to the record's value at a node of the projection
//     (altRef): indexing it by a constant name gives the child node, and
//     testing its truthiness or type is the same whether the value is
//     whole or projected (a projected object is still an object);
//   - an array whose elements are the given alternatives (altArray): its
//     length, its elements by a constant position, its iteration, its
//     order by keys (sort_by, group_by) do not look into the elements;
//   - anything else (altOpaque): no reference into the record that is not
//     kept whole.
//
// Every other use of a reference (comparing it, printing it, counting its
// keys, a builtin, an error message quoting it) needs it whole: its node
// is marked whole. What a query outputs is needed whole. Whatever the
// analyzer does not know (user functions, paths, assignments, unknown
// builtins, destructuring) fails the analysis: the whole record is then
// decoded. A projection found this way can only drop keys the query never
// looks up, and looking up a key it does not drop gives the same value.
type analyzer struct {
	root   *projNode
	failed bool
	steps  int
}

type altKind int

const (
	altOpaque altKind = iota
	altRef
	altArray
)

type alt struct {
	kind altKind
	node *projNode // altRef
	elem []alt     // altArray
}

var opaque = []alt{{kind: altOpaque}}

// Bounds of the analysis: beyond them it gives up (whole records).
const (
	maxAnalysisSteps = 20000
	maxAlts          = 64
)

// varScope binds variables to abstract values.
type varScope struct {
	name   string
	vals   []alt
	parent *varScope
}

func (s *varScope) lookup(name string) ([]alt, bool) {
	for ; s != nil; s = s.parent {
		if s.name == name {
			return s.vals, true
		}
	}
	return nil, false
}

func (a *analyzer) fail() []alt {
	a.failed = true
	return opaque
}

// need marks the references in vs as needed whole.
func (a *analyzer) need(vs []alt) {
	for _, v := range vs {
		switch v.kind {
		case altRef:
			v.node.whole = true
		case altArray:
			a.need(v.elem)
		}
	}
}

func (a *analyzer) join(x, y []alt) []alt {
	out := append(append(make([]alt, 0, len(x)+len(y)), x...), y...)
	if len(out) > maxAlts {
		return a.fail()
	}
	return out
}

func (a *analyzer) query(q *gojq.Query, in []alt, env *varScope) []alt {
	if a.failed || q == nil {
		return opaque
	}
	if a.steps++; a.steps > maxAnalysisSteps || len(q.FuncDefs) > 0 || len(q.Imports) > 0 || q.Meta != nil {
		return a.fail()
	}
	if q.Term != nil {
		return a.term(q.Term, in, env)
	}
	switch q.Op {
	case gojq.OpPipe:
		if len(q.Patterns) == 0 {
			return a.query(q.Right, a.query(q.Left, in, env), env)
		}
		if len(q.Patterns) != 1 || q.Patterns[0].Name == "" {
			return a.fail() // destructuring
		}
		v := a.query(q.Left, in, env)
		return a.query(q.Right, in, &varScope{name: q.Patterns[0].Name, vals: v, parent: env})
	case gojq.OpComma, gojq.OpAlt:
		return a.join(a.query(q.Left, in, env), a.query(q.Right, in, env))
	case gojq.OpAnd, gojq.OpOr:
		a.query(q.Left, in, env) // truthiness only
		a.query(q.Right, in, env)
		return opaque
	case gojq.OpEq, gojq.OpNe, gojq.OpGt, gojq.OpLt, gojq.OpGe, gojq.OpLe,
		gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod:
		a.need(a.query(q.Left, in, env))
		a.need(a.query(q.Right, in, env))
		return opaque
	}
	return a.fail() // assignments and updates read paths
}

func (a *analyzer) term(t *gojq.Term, in []alt, env *varScope) []alt {
	var out []alt
	switch t.Type {
	case gojq.TermTypeIdentity:
		out = in
	case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber:
		out = opaque
	case gojq.TermTypeString:
		a.str(t.Str, in, env)
		out = opaque
	case gojq.TermTypeFormat:
		if t.Str != nil {
			a.str(t.Str, in, env)
		} else {
			a.need(in)
		}
		out = opaque
	case gojq.TermTypeIndex:
		out = a.index(t.Index, in, in, env)
	case gojq.TermTypeFunc:
		out = a.call(t.Func, in, env)
	case gojq.TermTypeObject:
		a.object(t.Object, in, env)
		out = opaque
	case gojq.TermTypeArray:
		if t.Array.Query == nil {
			out = opaque
		} else {
			out = []alt{{kind: altArray, elem: a.query(t.Array.Query, in, env)}}
		}
	case gojq.TermTypeUnary:
		a.need(a.term(t.Unary.Term, in, env))
		out = opaque
	case gojq.TermTypeIf:
		out = a.cond(t.If, in, env)
	case gojq.TermTypeTry:
		out = a.query(t.Try.Body, in, env)
		if t.Try.Catch != nil {
			out = a.join(out, a.query(t.Try.Catch, opaque, env))
		}
	case gojq.TermTypeReduce:
		r := t.Reduce
		out = a.fold(r.Query, r.Patterns, r.Start, r.Update, nil, in, env)
	case gojq.TermTypeForeach:
		f := t.Foreach
		out = a.fold(f.Query, f.Patterns, f.Start, f.Update, f.Extract, in, env)
	case gojq.TermTypeLabel:
		out = a.query(t.Label.Body, in, env)
	case gojq.TermTypeBreak:
		out = nil
	case gojq.TermTypeQuery:
		out = a.query(t.Query, in, env)
	default: // .. and whatever comes next
		return a.fail()
	}
	for _, s := range t.SuffixList {
		switch {
		case s.Index != nil:
			out = a.index(s.Index, out, in, env)
		case s.Iter:
			out = a.iterate(out)
		}
		// s.Optional only hides errors.
	}
	return out
}

func (a *analyzer) str(s *gojq.String, in []alt, env *varScope) {
	for _, q := range s.Queries {
		a.need(a.query(q, in, env))
	}
}

// cond: the conditions are only tested; the branches give the values.
func (a *analyzer) cond(e *gojq.If, in []alt, env *varScope) []alt {
	a.query(e.Cond, in, env)
	out := a.query(e.Then, in, env)
	for _, el := range e.Elif {
		a.query(el.Cond, in, env)
		out = a.join(out, a.query(el.Then, in, env))
	}
	if e.Else != nil {
		return a.join(out, a.query(e.Else, in, env))
	}
	return a.join(out, in)
}

// fold is reduce and foreach: the state is needed whole, whatever it
// holds, so that the loop need not be followed to a fixed point.
func (a *analyzer) fold(src *gojq.Query, patterns []*gojq.Pattern, start, update, extract *gojq.Query, in []alt, env *varScope) []alt {
	if len(patterns) != 1 || patterns[0].Name == "" {
		return a.fail()
	}
	env = &varScope{name: patterns[0].Name, vals: a.query(src, in, env), parent: env}
	a.need(a.query(start, in, env))
	a.need(a.query(update, opaque, env))
	if extract != nil {
		a.need(a.query(extract, opaque, env))
	}
	return opaque
}

func (a *analyzer) object(o *gojq.Object, in []alt, env *varScope) {
	for _, kv := range o.KeyVals {
		switch {
		case kv.KeyQuery != nil:
			a.need(a.query(kv.KeyQuery, in, env))
		case kv.KeyString != nil:
			a.str(kv.KeyString, in, env)
		}
		switch {
		case kv.Val != nil:
			a.need(a.query(kv.Val, in, env))
		case kv.Key != "" && kv.Key[0] == '$': // {$x}
			a.need(a.variable(kv.Key, env))
		case kv.Key != "": // {id}
			a.need(a.field(kv.Key, in))
		case kv.KeyString != nil && len(kv.KeyString.Queries) == 0: // {"id"}
			a.need(a.field(kv.KeyString.Str, in))
		default:
			a.fail()
		}
	}
}

// index applies .name, .[e] or .[e:f] to base; e and f read in, the
// input of the term.
func (a *analyzer) index(x *gojq.Index, base, in []alt, env *varScope) []alt {
	switch {
	case x.Name != "":
		return a.field(x.Name, base)
	case x.Str != nil && len(x.Str.Queries) == 0:
		return a.field(x.Str.Str, base)
	case x.Str != nil:
		a.str(x.Str, in, env)
		a.need(base)
		return opaque
	case x.IsSlice:
		a.need(a.query(x.Start, in, env))
		a.need(a.query(x.End, in, env))
		if !constNumber(x.Start) || !constNumber(x.End) {
			a.need(base)
		}
		out := []alt{}
		for _, b := range base {
			if b.kind == altArray {
				out = a.join(out, []alt{b})
			} else {
				a.need([]alt{b})
				out = a.join(out, opaque)
			}
		}
		return out
	case constNumber(x.Start):
		out := opaque // null beyond the end
		for _, b := range base {
			if b.kind == altArray {
				out = a.join(out, b.elem)
			} else {
				a.need([]alt{b}) // an object's error message quotes it
			}
		}
		return out
	case x.Start != nil:
		if s := constString(x.Start); s != nil {
			return a.field(*s, base)
		}
		a.need(a.query(x.Start, in, env))
		a.need(base)
		return opaque
	}
	return a.fail()
}

// field applies .name to base.
func (a *analyzer) field(name string, base []alt) []alt {
	out := make([]alt, 0, len(base))
	for _, b := range base {
		switch b.kind {
		case altRef:
			n := b.node
			if n.whole {
				out = append(out, alt{kind: altOpaque})
				continue
			}
			if n.fields == nil {
				n.fields = map[string]*projNode{}
			}
			c, ok := n.fields[name]
			if !ok {
				c = &projNode{name: name}
				n.fields[name] = c
			}
			out = append(out, alt{kind: altRef, node: c})
		case altArray:
			a.need(b.elem) // the error message quotes the array
			out = append(out, alt{kind: altOpaque})
		default:
			out = append(out, alt{kind: altOpaque})
		}
	}
	return out
}

// iterate applies .[] to base.
func (a *analyzer) iterate(base []alt) []alt {
	out := []alt{}
	for _, b := range base {
		if b.kind == altArray {
			out = a.join(out, b.elem)
		} else {
			a.need([]alt{b})
			out = a.join(out, opaque)
		}
	}
	return out
}

func constNumber(q *gojq.Query) bool {
	return q != nil && q.Term != nil && q.Term.Type == gojq.TermTypeNumber && len(q.Term.SuffixList) == 0
}

func constString(q *gojq.Query) *string {
	if q == nil || q.Term == nil || q.Term.Type != gojq.TermTypeString || len(q.Term.SuffixList) != 0 || len(q.Term.Str.Queries) != 0 {
		return nil
	}
	return &q.Term.Str.Str
}

func (a *analyzer) variable(name string, env *varScope) []alt {
	if name == "$__loc__" {
		return a.fail()
	}
	if v, ok := env.lookup(name); ok {
		return v
	}
	return opaque // $ENV, and the bound parameters: not the record
}
