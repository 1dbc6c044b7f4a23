package jqsandbox

import (
	"context"
	"errors"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/structq"
)

// structqOptions define structq's functions for trusted programs: Apply,
// which answers lro_extract's questions without jq (see package structq)
// over the slurped records, decoded with the fields its second argument
// names (see analyzer.question). It stops with the run's cause when the
// run is canceled (deadline, heap watchdog).
func structqOptions() []gojq.CompilerOption {
	apply := func(v any, args []any) gojq.Iter {
		records, ok := v.([]any)
		if !ok {
			return gojq.NewIter[any](errors.New("the input of a question is not the array of records (run it in slurp mode)"))
		}
		st := current()
		out, err := structq.Apply(records, args[0], func() error {
			if st.ctx.Err() != nil {
				return context.Cause(st.ctx)
			}
			return nil
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
