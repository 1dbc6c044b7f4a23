package jqsandbox

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/itchyny/gojq"
)

// reservedPrefix starts the names of the prelude's internals, which user
// queries may not define or call (the _sbx_orig_* aliases are unguarded).
const reservedPrefix = "_sbx"

// opFuncs maps the operators that gojq compiles to direct native calls
// (bypassing name resolution, hence the prelude) to their guarded versions.
// Comparisons recurse into arrays and objects; + - * / allocate; the
// assignment operators may set a huge array index. % and the logical
// operators are harmless.
var opFuncs = map[gojq.Operator]string{
	gojq.OpAdd:       "_sbx_op_add",
	gojq.OpSub:       "_sbx_op_sub",
	gojq.OpMul:       "_sbx_op_mul",
	gojq.OpDiv:       "_sbx_op_div",
	gojq.OpEq:        "_sbx_op_eq",
	gojq.OpNe:        "_sbx_op_ne",
	gojq.OpLt:        "_sbx_op_lt",
	gojq.OpLe:        "_sbx_op_le",
	gojq.OpGt:        "_sbx_op_gt",
	gojq.OpGe:        "_sbx_op_ge",
	gojq.OpAssign:    "_sbx_assign",
	gojq.OpModify:    "_sbx_modify",
	gojq.OpUpdateAdd: "_sbx_update_add",
	gojq.OpUpdateSub: "_sbx_update_sub",
	gojq.OpUpdateMul: "_sbx_update_mul",
	gojq.OpUpdateDiv: "_sbx_update_div",
	gojq.OpUpdateMod: "_sbx_update_mod",
	gojq.OpUpdateAlt: "_sbx_update_alt",
}

// disabled lists builtins that make no sense or are unsafe in the sandbox,
// with the reason given to the user.
var disabled = map[string]string{
	"input/0":           "input is not available: each record is the input of the query (use Slurp mode to get all records as one array)",
	"inputs/0":          "inputs is not available: each record is the input of the query (use Slurp mode to get all records as one array)",
	"modulemeta/0":      "modulemeta is not available: modules are disabled",
	"get_search_list/0": "get_search_list is not available: modules are disabled",
}

// rewrite checks a parsed user query and rewrites it in place so that every
// risky native call goes through a guard. It rejects modules, input/inputs,
// gojq's internal functions that the prelude does not guard, the reserved
// prefix, and excessive nesting.
func rewrite(q *gojq.Query) error {
	return (&rewriter{}).query(q, nil)
}

// inlineTests rewrites in place the test calls of a trusted query that
// rewrite would inline (see rewriter.inlineTest), and nothing else: no
// guard, no check.
func inlineTests(q *gojq.Query) error {
	return (&rewriter{trusted: true}).query(q, nil)
}

type rewriter struct {
	depth int
	// trusted: the query is ours; only inline its test calls.
	trusted bool
}

// scope holds the functions ("name/arity") a query defines, including the
// parameters of the enclosing definitions; they shadow the builtins.
type scope struct {
	parent *scope
	names  map[string]bool
}

func (s *scope) defines(key string) bool {
	for ; s != nil; s = s.parent {
		if s.names[key] {
			return true
		}
	}
	return false
}

func funcKey(name string, arity int) string {
	return name + "/" + strconv.Itoa(arity)
}

func queryErrorf(format string, args ...any) error {
	return &QueryError{Message: fmt.Sprintf(format, args...)}
}

func checkName(name string) error {
	if strings.HasPrefix(name, reservedPrefix) {
		return queryErrorf("names starting with %q are reserved: %s", reservedPrefix, name)
	}
	return nil
}

func (r *rewriter) query(q *gojq.Query, sc *scope) error {
	if q == nil {
		return nil
	}
	if r.depth++; r.depth > maxQueryDepth {
		return limitf(ErrQueryTooLong, "nested more than %d levels deep", maxQueryDepth)
	}
	defer func() { r.depth-- }()
	if q.Meta != nil || len(q.Imports) > 0 {
		return queryErrorf("modules are disabled: import, include and module directives are not allowed")
	}
	if len(q.FuncDefs) > 0 {
		sc = &scope{parent: sc, names: map[string]bool{}}
		for _, fd := range q.FuncDefs {
			if err := checkName(fd.Name); err != nil {
				return err
			}
			sc.names[funcKey(fd.Name, len(fd.Args))] = true // visible in its body
			params := &scope{parent: sc, names: map[string]bool{}}
			for _, a := range fd.Args {
				a = strings.TrimPrefix(a, "$") // $x also defines x as a filter
				if err := checkName(a); err != nil {
					return err
				}
				params.names[funcKey(a, 0)] = true
			}
			if err := r.query(fd.Body, params); err != nil {
				return err
			}
		}
	}
	if err := r.patterns(q.Patterns, sc); err != nil {
		return err
	}
	if err := r.term(q.Term, sc); err != nil {
		return err
	}
	if err := r.queries(sc, q.Left, q.Right); err != nil {
		return err
	}
	r.operator(q)
	return nil
}

func (r *rewriter) queries(sc *scope, qs ...*gojq.Query) error {
	for _, q := range qs {
		if err := r.query(q, sc); err != nil {
			return err
		}
	}
	return nil
}

// operator replaces a guarded operator by a call to its guarded version.
// Operations with literal operands that cannot reach a costly case keep the
// native operator: "a" + .x, . - 1, . / 2.
func (r *rewriter) operator(q *gojq.Query) {
	name, ok := opFuncs[q.Op]
	if !ok || r.trusted {
		return
	}
	switch q.Op {
	case gojq.OpAdd:
		if isScalarLiteral(q.Left) || isScalarLiteral(q.Right) {
			return
		}
	case gojq.OpSub:
		if isNumberLiteral(q.Left) || isNumberLiteral(q.Right) {
			return
		}
	case gojq.OpDiv:
		if isNumberLiteral(q.Right) {
			return
		}
	}
	q.Term = &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: name, Args: []*gojq.Query{q.Left, q.Right}}}
	q.Left, q.Right, q.Op = nil, nil, 0
}

func (r *rewriter) term(t *gojq.Term, sc *scope) error {
	if t == nil {
		return nil
	}
	var err error
	switch t.Type {
	case gojq.TermTypeIndex:
		err = r.index(t.Index, sc)
	case gojq.TermTypeFunc:
		if err = r.call(t.Func, sc); err == nil {
			r.inlineTest(t.Func, sc)
		}
	case gojq.TermTypeObject:
		for _, kv := range t.Object.KeyVals {
			if err = r.str(kv.KeyString, sc); err == nil {
				err = r.queries(sc, kv.KeyQuery, kv.Val)
			}
			if err != nil {
				break
			}
		}
	case gojq.TermTypeArray:
		err = r.query(t.Array.Query, sc)
	case gojq.TermTypeUnary:
		err = r.term(t.Unary.Term, sc)
	case gojq.TermTypeFormat, gojq.TermTypeString:
		err = r.str(t.Str, sc)
	case gojq.TermTypeIf:
		err = r.queries(sc, t.If.Cond, t.If.Then, t.If.Else)
		for _, e := range t.If.Elif {
			if err == nil {
				err = r.queries(sc, e.Cond, e.Then)
			}
		}
	case gojq.TermTypeTry:
		err = r.queries(sc, t.Try.Body, t.Try.Catch)
	case gojq.TermTypeReduce:
		if err = r.patterns(t.Reduce.Patterns, sc); err == nil {
			err = r.queries(sc, t.Reduce.Query, t.Reduce.Start, t.Reduce.Update)
		}
	case gojq.TermTypeForeach:
		if err = r.patterns(t.Foreach.Patterns, sc); err == nil {
			err = r.queries(sc, t.Foreach.Query, t.Foreach.Start, t.Foreach.Update, t.Foreach.Extract)
		}
	case gojq.TermTypeLabel:
		err = r.query(t.Label.Body, sc)
	case gojq.TermTypeQuery:
		err = r.query(t.Query, sc)
	}
	if err != nil {
		return err
	}
	for _, s := range t.SuffixList {
		if err := r.index(s.Index, sc); err != nil {
			return err
		}
	}
	return nil
}

// index guards a computed index: .[x] with an array x searches for a
// sub-array (gojq compiles indexing to a direct native call).
func (r *rewriter) index(x *gojq.Index, sc *scope) error {
	if x == nil {
		return nil
	}
	if err := r.str(x.Str, sc); err != nil {
		return err
	}
	if err := r.queries(sc, x.Start, x.End); err != nil {
		return err
	}
	if !x.IsSlice && x.Start != nil && !isScalarLiteral(x.Start) && !r.trusted {
		x.Start = guardIndex(x.Start)
	}
	return nil
}

func guardIndex(q *gojq.Query) *gojq.Query {
	return &gojq.Query{Left: q, Op: gojq.OpPipe, Right: &gojq.Query{Term: &gojq.Term{
		Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "_sbx_chk_idx"},
	}}}
}

func (r *rewriter) call(f *gojq.Func, sc *scope) error {
	if strings.HasPrefix(f.Name, "$") { // a variable
		return nil
	}
	if err := checkName(f.Name); err != nil {
		return err
	}
	if err := r.queries(sc, f.Args...); err != nil {
		return err
	}
	key := funcKey(f.Name, len(f.Args))
	if sc.defines(key) || r.trusted {
		return nil
	}
	if msg, ok := disabled[key]; ok {
		return queryErrorf("%s", msg)
	}
	if strings.HasPrefix(f.Name, "_") && !preludeNames[key] {
		return queryErrorf("internal function %s is not available", key)
	}
	return nil
}

// inlineTest turns test(re; flags), and test(re) with a literal re, into
// the native call that the definitions of test reach in the end,
// _sbx_match(re; flags; true): the same answer (the call of the prelude's
// _match, guard included; see matchOption), without the definitions'
// closures, which took most of the time of a query searching for a word.
// Only arguments that are a variable or a literal are inlined: each has
// one value, and evaluating it in another order changes nothing. A test
// the query defines itself is left alone.
func (r *rewriter) inlineTest(f *gojq.Func, sc *scope) {
	if f.Name != "test" || sc.defines(funcKey(f.Name, len(f.Args))) {
		return
	}
	switch {
	case len(f.Args) == 2 && simpleArg(f.Args[0]) && simpleArg(f.Args[1]):
		f.Args = append(f.Args, literal(gojq.TermTypeTrue))
	case len(f.Args) == 1 && isStringLiteral(f.Args[0]):
		f.Args = append(f.Args, literal(gojq.TermTypeNull), literal(gojq.TermTypeTrue))
	default:
		return
	}
	f.Name = matchFunc
}

// simpleArg reports a variable or a scalar literal.
func simpleArg(q *gojq.Query) bool {
	if isScalarLiteral(q) {
		return true
	}
	t := literalTerm(q)
	return t != nil && t.Type == gojq.TermTypeFunc && len(t.Func.Args) == 0 &&
		strings.HasPrefix(t.Func.Name, "$") && t.Func.Name != "$__loc__"
}

// isStringLiteral reports a string literal without interpolation.
func isStringLiteral(q *gojq.Query) bool {
	t := literalTerm(q)
	return t != nil && t.Type == gojq.TermTypeString && t.Str != nil && t.Str.Queries == nil
}

func literal(typ gojq.TermType) *gojq.Query { return &gojq.Query{Term: &gojq.Term{Type: typ}} }

func (r *rewriter) str(s *gojq.String, sc *scope) error {
	if s == nil {
		return nil
	}
	return r.queries(sc, s.Queries...)
}

func (r *rewriter) patterns(ps []*gojq.Pattern, sc *scope) error {
	for _, p := range ps {
		if p == nil {
			continue
		}
		if err := r.patterns(p.Array, sc); err != nil {
			return err
		}
		for _, kv := range p.Object {
			if err := r.str(kv.KeyString, sc); err != nil {
				return err
			}
			if kv.KeyQuery != nil {
				if err := r.query(kv.KeyQuery, sc); err != nil {
					return err
				}
				if !r.trusted {
					kv.KeyQuery = guardIndex(kv.KeyQuery)
				}
			}
			if err := r.patterns([]*gojq.Pattern{kv.Val}, sc); err != nil {
				return err
			}
		}
	}
	return nil
}

// isScalarLiteral reports a number, string (without interpolation), null,
// true or false literal.
func isScalarLiteral(q *gojq.Query) bool {
	if isNumberLiteral(q) {
		return true
	}
	t := literalTerm(q)
	if t == nil {
		return false
	}
	switch t.Type {
	case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse:
		return true
	case gojq.TermTypeString:
		return t.Str != nil && t.Str.Queries == nil
	}
	return false
}

// isNumberLiteral reports a number literal, possibly negated.
func isNumberLiteral(q *gojq.Query) bool {
	t := literalTerm(q)
	for t != nil && t.Type == gojq.TermTypeUnary && len(t.SuffixList) == 0 {
		t = t.Unary.Term
	}
	return t != nil && t.Type == gojq.TermTypeNumber && len(t.SuffixList) == 0
}

func literalTerm(q *gojq.Query) *gojq.Term {
	if q == nil || len(q.FuncDefs) > 0 || q.Term == nil || len(q.Term.SuffixList) > 0 {
		return nil
	}
	return q.Term
}
