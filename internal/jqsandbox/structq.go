package jqsandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/structq"
)

// structqOptions define structq's functions for trusted programs: Apply,
// which answers lro_extract's questions without jq (see package structq)
// over the slurped records, decoded with the fields its second argument
// names (see analyzer.question). It stops with the run's cause when the
// run is canceled (deadline, heap watchdog), at once (see applyBounded).
func structqOptions() []gojq.CompilerOption {
	apply := func(v any, args []any) gojq.Iter {
		records, ok := v.([]any)
		if !ok {
			return gojq.NewIter[any](errors.New("the input of a question is not the array of records (run it in slurp mode)"))
		}
		st := current()
		out, err := applyBounded(st.ctx, func() ([]any, error) {
			return structq.Apply(records, args[0], func() error {
				if st.ctx.Err() != nil {
					return context.Cause(st.ctx)
				}
				return nil
			})
		})
		if err != nil {
			return gojq.NewIter[any](err)
		}
		return gojq.NewIter(out...)
	}
	return []gojq.CompilerOption{
		gojq.WithIterFunction(structq.FuncName, 2, 2, apply),
		gojq.WithIterFunction(structq.RecordsFuncName, 2, 2, apply),
	}
}

// question applies one of structq's functions to in, the slurped
// records: it reads of each record the dotted paths its second argument
// lists (a constant array of strings), and RecordsFuncName outputs
// records whole too.
func (a *analyzer) question(f *gojq.Func, in []alt, env *varScope) []alt {
	a.need(a.query(f.Args[0], in, env))
	paths, ok := constStrings(f.Args[1])
	if !ok {
		return a.fail()
	}
	for _, v := range in {
		if v.kind != altArray {
			a.need([]alt{v})
			continue
		}
		for _, p := range paths {
			x := v.elem
			for _, k := range strings.Split(p, ".") {
				x = a.field(k, x)
			}
			a.need(x)
		}
	}
	if f.Name == structq.RecordsFuncName {
		a.need(in)
	}
	return opaque
}

// constStrings reads a constant array of strings, ["a","b.c"].
func constStrings(q *gojq.Query) ([]string, bool) {
	if q == nil || q.Term == nil || q.Term.Type != gojq.TermTypeArray || len(q.Term.SuffixList) > 0 {
		return nil, false
	}
	var out []string
	var walk func(q *gojq.Query) bool
	walk = func(q *gojq.Query) bool {
		if q.Op == gojq.OpComma {
			return walk(q.Left) && walk(q.Right)
		}
		s := constString(q)
		if s == nil {
			return false
		}
		out = append(out, *s)
		return true
	}
	if q.Term.Array.Query == nil {
		return out, true
	}
	return out, walk(q.Term.Array.Query)
}

// lazyQuestion returns, for a question's program that outputs records
// whole, _lro_structq_records($q; paths), the projection of its paths,
// as lazySort does for sort_by(f): the paths are what the question tests
// and sorts by, and the records are output as they are, each decoded
// whole from its line. For any other query it returns false.
func lazyQuestion(query *gojq.Query) (Projection, bool) {
	t := query.Term
	if query.Op != 0 || t == nil || t.Type != gojq.TermTypeFunc || len(t.SuffixList) > 0 ||
		t.Func.Name != structq.RecordsFuncName || len(t.Func.Args) != 2 {
		return Projection{}, false
	}
	a := &analyzer{root: &projNode{}}
	fn := *t.Func
	fn.Name = structq.FuncName // the same reads, without the output
	a.question(&fn, []alt{{kind: altArray, elem: []alt{{kind: altRef, node: a.root}}}}, nil)
	if a.failed || a.root.whole {
		return Projection{}, true
	}
	return Projection{root: a.root}, true
}

// lingering holds the place of the one question whose computation may run
// on after its run ended (see applyBounded).
var lingering = make(chan struct{}, 1)

// applyBounded runs a question's computation, and returns the run's cause
// as soon as ctx ends, even when the computation has not noticed: parts of
// it (an aggregate over every record) do not stop between records, and an
// exact sum of 100,000 numbers can take many seconds. The run then ends,
// and frees the sandbox's run slot at its deadline (issue 38: in process,
// a sum stopped at its deadline kept the slot, and every later query was
// busy, for 100 s); the computation runs on to its end in the background,
// holding no slot. One computation at a time: the next question waits for
// a lingering one, within its own deadline, so that a caller looping on a
// slow question costs one computation at most, as a worker would.
func applyBounded(ctx context.Context, compute func() ([]any, error)) ([]any, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	select {
	case lingering <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	type result struct {
		out []any
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("jqsandbox: internal error: %v", p)}
			}
			<-lingering // before the result: a question that ended is not lingering
			done <- r
		}()
		r.out, r.err = compute()
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// Lingering reports whether the computation of a question stopped at its
// deadline still runs (see applyBounded): a worker process that has one is
// best replaced, so that the next query's CPU time is its own.
func Lingering() bool { return len(lingering) > 0 }
