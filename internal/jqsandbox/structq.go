package jqsandbox

import (
	"context"
	"errors"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/structq"
)

// structqOption defines structq.FuncName for trusted programs: Apply,
// which answers lro_extract's questions without jq (see package structq)
// from the tuples of fields the program made of the slurped records:
// map(T) | _lro_structq($q), or _lro_structq($q; map(T)), which also
// outputs records of its input whole (see lazyQuestion). It stops with
// the run's cause when the run is canceled (deadline, heap watchdog).
func structqOption() gojq.CompilerOption {
	return gojq.WithIterFunction(structq.FuncName, 1, 2, func(v any, args []any) gojq.Iter {
		records, ok := v.([]any)
		if !ok {
			return gojq.NewIter[any](errors.New(structq.FuncName + ": the input is not the array of records (run it in slurp mode)"))
		}
		tuples := records
		if len(args) == 2 {
			if tuples, ok = args[1].([]any); !ok {
				return gojq.NewIter[any](errors.New(structq.FuncName + ": the tuples are not an array"))
			}
		}
		st := current()
		out, err := structq.Apply(records, tuples, args[0], func() error {
			if st.ctx.Err() != nil {
				return context.Cause(st.ctx)
			}
			return nil
		})
		if err != nil {
			return gojq.NewIter[any](err)
		}
		return gojq.NewIter(out...)
	})
}

// lazyQuestion returns, for a question's program that outputs records
// whole, _lro_structq($q; T), the projection of T alone, as lazySort does
// for sort_by(f): T reads what the question tests and sorts by, and the
// records are output as they are, each decoded whole from its line. For
// any other query it returns false.
func lazyQuestion(query *gojq.Query) (Projection, bool) {
	t := query.Term
	if query.Op != 0 || t == nil || t.Type != gojq.TermTypeFunc || len(t.SuffixList) > 0 ||
		t.Func.Name != structq.FuncName || len(t.Func.Args) != 2 {
		return Projection{}, false
	}
	a := &analyzer{root: &projNode{}}
	records := []alt{{kind: altArray, elem: []alt{{kind: altRef, node: a.root}}}}
	a.need(a.query(t.Func.Args[1], records, nil))
	if a.failed || a.root.whole {
		return Projection{}, true
	}
	return Projection{root: a.root}, true
}
