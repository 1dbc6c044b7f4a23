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
	code     *gojq.Code
	varNames []string
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
	defs, err := parsePrelude()
	if err != nil {
		return nil, err
	}
	if err := rewrite(ast); err != nil {
		return nil, err
	}
	ast.FuncDefs = append(defs, ast.FuncDefs...)
	opts := append(guardOptions(),
		gojq.WithEnvironLoader(func() []string { return nil }),
		gojq.WithVariables(vars),
	)
	code, err := gojq.Compile(ast, opts...)
	if err != nil {
		return nil, &QueryError{Message: err.Error()}
	}
	return &Query{code: code, varNames: append([]string(nil), varNames...)}, nil
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
