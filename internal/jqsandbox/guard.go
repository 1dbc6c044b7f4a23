package jqsandbox

import (
	"context"
	"regexp"

	"github.com/itchyny/gojq"
)

// The guards are Go functions registered with gojq.WithFunction. The prelude
// (prelude.go) calls one before each builtin that could allocate or recurse
// without bound in a single native call; a guard returns its input unchanged
// when the call is affordable and otherwise aborts the run (see
// runState.fail) before the builtin runs.

// Estimated costs, in bytes, of the allocations of the builtins.
const (
	sizeSlot     = 16  // an element of []any
	sizeMapEntry = 64  // an entry of map[string]any, amortized
	sizeSortItem = 56  // per element sorted: sortItem, its pointer and the result
	sizePiece    = 48  // per piece of split: string header, boxing and slot
	sizeRune     = 24  // per rune of explode: slot and boxed int
	sizeMatch    = 512 // per regex match: the match object and its indices
	sizeCapture  = 400 // per capture group of a match
	// per instruction of a compiled regex (gojq compiles two programs)
	sizeRegexInst = 400
)

// current returns the state of the running query. It cannot be nil while
// gojq runs our code, but a guard must never crash the process.
func current() *runState {
	if st := active; st != nil {
		return st
	}
	return &runState{lim: DefaultLimits(), ctx: context.Background(), cancel: func(error) {}, regexes: map[[2]string]*regexp.Regexp{}}
}

func guardOptions() []gojq.CompilerOption {
	guards := []struct {
		name     string
		min, max int
		f        func(*runState, any, []any) any
	}{
		{"_sbx_chk_enc", 1, 1, guardEncode},
		{"_sbx_chk_add", 2, 2, guardAdd},
		{"_sbx_chk_addall", 0, 0, guardAddAll},
		{"_sbx_chk_sub", 2, 2, guardSub},
		{"_sbx_chk_mul", 2, 2, guardMul},
		{"_sbx_chk_div", 2, 2, guardDiv},
		{"_sbx_chk_join", 1, 1, guardJoin},
		{"_sbx_chk_flatten", 0, 0, guardFlatten},
		{"_sbx_chk_transpose", 0, 0, guardTranspose},
		{"_sbx_chk_explode", 0, 0, guardExplode},
		{"_sbx_chk_split", 1, 1, guardSplit},
		{"_sbx_chk_indices", 1, 1, guardIndices},
		{"_sbx_chk_contains", 1, 1, guardContains},
		{"_sbx_chk_sort", 0, 1, guardSort},
		{"_sbx_chk_bsearch", 1, 1, guardBsearch},
		{"_sbx_chk_tonumber", 0, 0, guardToNumber},
		{"_sbx_chk_setpath", 1, 1, guardSetpath},
		{"_sbx_chk_getpath", 1, 1, guardGetpath},
		{"_sbx_chk_delpaths", 1, 1, guardDelpaths},
		{"_sbx_chk_delete", 0, 0, guardDelete},
		{"_sbx_chk_idx", 0, 0, guardIndexValue},
		{"_sbx_chk_timefmt", 1, 1, guardTimeFormat},
		{"_sbx_fromjson", 0, 0, fromJSON},
		{"_sbx_keys_unsorted", 0, 0, keysUnsorted},
		{"_sbx_op_eq", 2, 2, compareOp(func(c int) bool { return c == 0 })},
		{"_sbx_op_ne", 2, 2, compareOp(func(c int) bool { return c != 0 })},
		{"_sbx_op_lt", 2, 2, compareOp(func(c int) bool { return c < 0 })},
		{"_sbx_op_le", 2, 2, compareOp(func(c int) bool { return c <= 0 })},
		{"_sbx_op_gt", 2, 2, compareOp(func(c int) bool { return c > 0 })},
		{"_sbx_op_ge", 2, 2, compareOp(func(c int) bool { return c >= 0 })},
	}
	opts := make([]gojq.CompilerOption, 0, len(guards)+3)
	for _, g := range guards {
		f := g.f
		opts = append(opts, gojq.WithFunction(g.name, g.min, g.max, func(v any, args []any) any {
			return f(current(), v, args)
		}))
	}
	// jq's debug and stderr print to stderr, which is the MCP transport's
	// neighbour; here they only pass their input through. input_filename
	// is null as for jq reading stdin.
	identity := func(v any, _ []any) any { return v }
	opts = append(opts, sortOptions()...)
	return append(opts,
		gojq.WithFunction("debug", 0, 0, identity),
		gojq.WithFunction("stderr", 0, 0, identity),
		gojq.WithFunction("input_filename", 0, 0, func(any, []any) any { return nil }),
		recordsOption(),
		matchOption(true),
	)
}

// recordsOption defines recordsFunc (see Query.code).
func recordsOption() gojq.CompilerOption {
	return gojq.WithIterFunction(recordsFunc, 0, 0, func(v any, _ []any) gojq.Iter {
		vals, _ := v.([]any)
		return &recordIter{st: current(), vals: vals}
	})
}

// recordIter yields the records of a batch one at a time: gojq asks for
// the next only once the query is done with the previous, so st.record
// is the record that the query's outputs and errors come from.
type recordIter struct {
	st   *runState
	vals []any
	i    int
}

// Next implements gojq.Iter: the next record, marked as the current one.
func (it *recordIter) Next() (any, bool) {
	if it.i >= len(it.vals) {
		return nil, false
	}
	it.st.record = it.i
	it.i++
	return it.vals[it.i-1], true
}

// tooComplex aborts the run with ErrTooComplex.
func (st *runState) tooComplex(format string, args ...any) error {
	return st.fail(limitf(ErrTooComplex, format, args...))
}

// shapeErr turns a failed measure into the error that aborts the run.
func (st *runState) shapeErr(s shape, what string, maxNodes int) error {
	switch {
	case s.canceled:
		return context.Cause(st.ctx)
	case s.deep:
		return st.tooComplex("%s of a value nested more than %d levels deep", what, maxDepth)
	default:
		return st.tooComplex("%s of a value with more than %d elements (shared subtrees count each time)", what, maxNodes)
	}
}

// guardWork bounds an operation comparing each of n elements with the
// whole of v.
func (st *runState) guardWork(v any, n int, what string) error {
	budget := max(workBudget/n, 1)
	s := measure(v, budget, st.ctx.Done())
	switch {
	case s.ok:
		return nil
	case s.deep || s.canceled:
		return st.shapeErr(s, what, budget)
	}
	return st.tooComplex("%s comparing %d elements with a value of more than %d elements (limit %d comparisons)", what, n, budget, workBudget)
}

// measureOK walks v and returns an error when it is too large or deep.
func (st *runState) measureOK(v any, what string, maxNodes int) (shape, error) {
	s := measure(v, maxNodes, st.ctx.Done())
	if !s.ok {
		return s, st.shapeErr(s, what, maxNodes)
	}
	return s, nil
}

// each calls f with the elements of an array or the values of an object.
func each(v any, f func(any)) {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			f(x)
		}
	case map[string]any:
		for _, x := range v {
			f(x)
		}
	}
}

// orErr returns err if not nil, else v.
func orErr(v any, err error) any {
	if err != nil {
		return err
	}
	return v
}
