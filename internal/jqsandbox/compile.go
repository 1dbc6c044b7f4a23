package jqsandbox

import (
	"errors"
	"regexp"
	"strings"

	"github.com/itchyny/gojq"
)

// Query is a compiled query. It is immutable and safe for concurrent use
// (runs are serialized anyway, see Run). gojq caches the regular
// expressions a query compiles in the Query itself, at most 1000 per run:
// compile hostile queries per request rather than keeping them around.
type Query struct {
	// code is `_sbx_records | (query)` (see overRecords): it runs the
	// query on each element of an array. A run gives it the records a
	// batch at a time, or the slurped array alone, so that gojq sets up
	// its machine once a batch rather than once a record.
	code     *gojq.Code
	varNames []string
	// objects are the keys of the query's object constructions, which
	// results print in the query's order (see keyOrder).
	objects [][]string
	// streamProj and slurpProj are what the query reads of each record
	// in each mode (see Projection).
	streamProj, slurpProj Projection
	// selectProj is, for a query select(f), what f reads (see lazySelect).
	selectProj Projection
	// sortProj is, for a query sort_by(f), what f reads (see lazySort):
	// sort_by (gojq's, or the guarded one of prelude.go, which calls it)
	// outputs the records themselves, which the output replaces by the
	// records decoded whole.
	sortProj Projection
	// once, when set, is the check under which the query yields one
	// output per record in Stream mode (see onceOf).
	once *onceCheck
}

var varName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Compile parses, checks and compiles query. varNames are the names of the
// variables given to Run, without '$'. Only lim.MaxQueryBytes is used.
//
// The errors wrap ErrQueryTooLong, or are a *QueryError for parse errors
// (with the position), compile errors (unknown function or variable) and
// disabled features: import/include/module directives, input/inputs, the
// internal functions of gojq, names starting with _sbx.
func Compile(query string, varNames []string, lim Limits) (*Query, error) {
	lim = lim.withDefaults()
	if len(query) > lim.MaxQueryBytes {
		return nil, limitf(ErrQueryTooLong, "%d bytes (limit %d)", len(query), lim.MaxQueryBytes)
	}
	vars := make([]string, len(varNames))
	seen := map[string]bool{}
	for i, n := range varNames {
		if !varName.MatchString(n) || seen[n] {
			return nil, queryErrorf("invalid or duplicate variable name %q", n)
		}
		seen[n], vars[i] = true, "$"+n
	}
	ast, err := gojq.Parse(query)
	if err != nil {
		return nil, parseError(query, err)
	}
	if err := loadPrelude(); err != nil { // rewrite checks names against it
		return nil, err
	}
	// Analyzed before rewrite, which turns operators into calls the
	// analysis does not know.
	stream, slurp, sel, sorted, once := project(ast, Stream), project(ast, Slurp), lazySelect(ast), lazySort(ast), onceOf(ast)
	if err := rewrite(ast); err != nil {
		return nil, err
	}
	objects := queryObjects(ast)
	defs, err := parsePrelude(ast)
	if err != nil {
		return nil, err
	}
	opts := append(guardOptions(),
		gojq.WithEnvironLoader(func() []string { return nil }),
		gojq.WithVariables(vars),
	)
	code, err := gojq.Compile(overRecords(ast, defs), opts...)
	if err != nil {
		return nil, &QueryError{Message: err.Error()}
	}
	return &Query{code: code, varNames: append([]string(nil), varNames...), objects: objects, streamProj: stream, slurpProj: slurp, selectProj: sel, sortProj: sorted, once: once}, nil
}

// recordsFunc names the iterator that code starts with: it yields the
// elements of its input, and tells the run which one the query is
// evaluating (see recordIter).
const recordsFunc = "_sbx_records"

// overRecords returns `_sbx_records | (query)` with defs defined around
// it. The query keeps its own definitions in its own scope, where they
// shadow defs as they would if listed after them.
func overRecords(query *gojq.Query, defs []*gojq.FuncDef) *gojq.Query {
	return &gojq.Query{
		FuncDefs: defs,
		Left:     &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: recordsFunc}}},
		Op:       gojq.OpPipe,
		Right:    &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeQuery, Query: query}},
	}
}

// parseError locates a gojq parse error in the query.
func parseError(query string, err error) error {
	var pe *gojq.ParseError
	if !errors.As(err, &pe) {
		return &QueryError{Message: err.Error()}
	}
	off := pe.Offset // just after the offending token
	if len(pe.Token) <= off {
		off -= len(pe.Token)
	}
	off = min(max(off, 0), len(query))
	before := query[:off]
	line := strings.Count(before, "\n") + 1
	col := off - strings.LastIndexByte(before, '\n')
	return &QueryError{Message: err.Error(), Line: line, Column: col}
}

// CompileTrusted compiles a query the caller wrote itself (a recipe), whose
// variables alone come from outside. It skips the guards that Compile puts
// around builtins, which only hostile query text needs and which cost a
// query a good part of its time; runs keep their deadline, heap watchdog,
// serialization and output caps. The caller must bound the variable values
// it binds (lro_extract accepts short scalars only).
func CompileTrusted(query string, varNames []string) (*Query, error) {
	vars := make([]string, len(varNames))
	for i, n := range varNames {
		if !varName.MatchString(n) {
			return nil, queryErrorf("invalid variable name %q", n)
		}
		vars[i] = "$" + n
	}
	ast, err := gojq.Parse(query)
	if err != nil {
		return nil, parseError(query, err)
	}
	objects := queryObjects(ast)
	stream, slurp, sel, sorted, once := project(ast, Stream), project(ast, Slurp), lazySelect(ast), lazySort(ast), onceOf(ast)
	if err := inlineTests(ast); err != nil {
		return nil, err
	}
	defs, err := trustedDefs(ast)
	if err != nil {
		return nil, err
	}
	code, err := gojq.Compile(overRecords(ast, defs), append(append(sortOptions(), structqOptions()...),
		gojq.WithEnvironLoader(func() []string { return nil }),
		gojq.WithVariables(vars),
		recordsOption(),
		matchOption(false),
	)...)
	if err != nil {
		return nil, &QueryError{Message: err.Error()}
	}
	return &Query{code: code, varNames: append([]string(nil), varNames...), objects: objects, streamProj: stream, slurpProj: slurp, selectProj: sel, sortProj: sorted, once: once}, nil
}

// testPrelude gives the test calls of a trusted query that inlineTests
// leaves the fast path of _sbx_match (see matchOption).
const testPrelude = `
def test($re; $flags): _sbx_match($re; $flags; true);
def test($re):
  if $re | type == "array" then test($re[0]; $re[1]) else test($re; null) end;
`

// sortPrelude gives a trusted query the faster sort_by and group_by of
// sort.go.
const sortPrelude = `
def sort_by(f): map([f]) as $k | ` + sortByDef + `;
def group_by(f): map([f]) as $k | ` + groupByDef + `;
`

// trustedDefs returns the definitions of testPrelude and sortPrelude that
// query may call, freshly parsed (gojq's compiler may modify the syntax
// tree).
func trustedDefs(query *gojq.Query) ([]*gojq.FuncDef, error) {
	text := query.String()
	var prelude string
	if strings.Contains(text, "test") {
		prelude += testPrelude
	}
	if strings.Contains(text, "sort_by") || strings.Contains(text, "group_by") {
		prelude += sortPrelude
	}
	if prelude == "" {
		return nil, nil
	}
	q, err := gojq.Parse(prelude + ".")
	if err != nil {
		return nil, err
	}
	return q.FuncDefs, nil
}
