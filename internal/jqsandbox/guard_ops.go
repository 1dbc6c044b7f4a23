package jqsandbox

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/itchyny/gojq"
)

// guardEncode guards tostring (args[0] == 0), tojson (1) and the @formats
// (2), whose output may be several times the size of the JSON encoding.
func guardEncode(st *runState, v any, args []any) any {
	kind, _ := gojq.ToInt(args[0])
	if _, ok := v.(string); ok && kind == 0 {
		return v
	}
	factor := 2.0
	if kind == 2 {
		factor = 8
	}
	limit := st.oneShot() / factor
	n, ok, deep := encodedLen(v, int(limit), st.ctx.Done())
	switch {
	case deep:
		return st.tooComplex("encoding a value nested more than %d levels deep", maxDepth)
	case !ok && st.ctx.Err() != nil:
		return context.Cause(st.ctx)
	case !ok:
		return st.fail(limitf(ErrMemory, "encoding a value larger than %s (MaxHeapBytes/8/%g)", human(limit), factor))
	}
	if err := st.need(float64(n)*factor, "encoding"); err != nil {
		return err
	}
	return v
}

// guardAdd guards l + r.
func guardAdd(st *runState, v any, args []any) any {
	var n float64
	switch l := args[0].(type) {
	case string:
		if r, ok := args[1].(string); ok {
			n = float64(len(l) + len(r))
		}
	case []any:
		if r, ok := args[1].([]any); ok {
			n = float64(len(l)+len(r)) * sizeSlot
		}
	case map[string]any:
		if r, ok := args[1].(map[string]any); ok {
			n = float64(len(l)+len(r)) * sizeMapEntry
		}
	}
	return orErr(v, st.need(n, "addition"))
}

// guardAddAll guards add, which concatenates with repeated growth.
func guardAddAll(st *runState, v any, _ []any) any {
	var n float64
	each(v, func(x any) {
		switch x := x.(type) {
		case string:
			n += float64(len(x))
		case []any:
			n += float64(len(x)) * sizeSlot
		case map[string]any:
			n += float64(len(x)) * sizeMapEntry
		}
	})
	return orErr(v, st.need(2*n, "add"))
}

// guardSub guards l - r, quadratic for arrays.
func guardSub(st *runState, v any, args []any) any {
	l, ok1 := args[0].([]any)
	r, ok2 := args[1].([]any)
	if !ok1 || !ok2 || len(l) == 0 || len(r) == 0 {
		return v
	}
	if err := st.guardWork(r, len(l), "array subtraction"); err != nil {
		return err
	}
	return orErr(v, st.need(float64(len(l))*sizeSlot, "array subtraction"))
}

// guardMul guards l * r: string repetition allocates the whole result at
// once, object multiplication merges recursively, and big integer products
// take superlinear time.
func guardMul(st *runState, v any, args []any) any {
	l, r := args[0], args[1]
	if s, ok := l.(string); ok {
		return orErr(v, st.guardRepeat(s, r))
	}
	if s, ok := r.(string); ok {
		return orErr(v, st.guardRepeat(s, l))
	}
	lm, ok1 := l.(map[string]any)
	rm, ok2 := r.(map[string]any)
	if ok1 && ok2 {
		sl, err := st.measureOK(lm, "object multiplication", st.lim.nodeBudget())
		if err != nil {
			return err
		}
		sr, err := st.measureOK(rm, "object multiplication", st.lim.nodeBudget())
		if err != nil {
			return err
		}
		return orErr(v, st.need(float64(sl.nodes+sr.nodes)*sizeMapEntry, "object multiplication"))
	}
	_, big1 := l.(*big.Int)
	_, big2 := r.(*big.Int)
	if bits := bitLen(l) + bitLen(r); (big1 || big2) && bits > maxBigIntBits {
		return st.tooComplex("multiplying integers of %d bits (limit %d)", bits, maxBigIntBits)
	}
	return v
}

// guardRepeat mirrors gojq's repeatString: the count is truncated to an int
// and capped at MaxInt32, negative and NaN counts give null.
func (st *runState) guardRepeat(s string, count any) error {
	n, ok := gojq.ToFloat64(count)
	if !ok || !(n > 0) {
		return nil
	}
	c := math.Floor(min(n, math.MaxInt32))
	return st.need(float64(len(s))*c, "string repetition")
}

func bitLen(v any) int {
	switch v := v.(type) {
	case *big.Int:
		return v.BitLen()
	case int:
		return 64
	}
	return 0
}

// guardDiv guards l / r, which splits strings.
func guardDiv(st *runState, v any, args []any) any {
	s, ok1 := args[0].(string)
	sep, ok2 := args[1].(string)
	if !ok1 || !ok2 {
		return v
	}
	return orErr(v, st.need(pieces(s, sep)*sizePiece, "string division"))
}

func pieces(s, sep string) float64 {
	switch {
	case s == "":
		return 0
	case sep == "":
		return float64(utf8.RuneCountInString(s))
	}
	return float64(strings.Count(s, sep) + 1)
}

// guardSplit guards split/1.
func guardSplit(st *runState, v any, args []any) any {
	return guardDiv(st, v, []any{v, args[0]})
}

// guardJoin guards join/1.
func guardJoin(st *runState, v any, args []any) any {
	sep, _ := args[0].(string)
	var n, count float64
	each(v, func(x any) {
		count++
		switch x := x.(type) {
		case string:
			n += float64(len(x))
		case nil:
		default:
			n += 24
		}
	})
	n += max(count-1, 0) * float64(len(sep))
	return orErr(v, st.need(2*n, "join"))
}

// guardFlatten guards flatten, which recurses and copies every leaf.
func guardFlatten(st *runState, v any, _ []any) any {
	s, err := st.measureOK(v, "flatten", int(st.oneShot()/(2*sizeSlot)))
	if err != nil {
		return err
	}
	return orErr(v, st.need(2*float64(s.nodes)*sizeSlot, "flatten"))
}

// guardTranspose guards transpose, which allocates rows x longest row.
func guardTranspose(st *runState, v any, _ []any) any {
	rows, ok := v.([]any)
	if !ok {
		return v
	}
	longest := 0
	for _, r := range rows {
		if r, ok := r.([]any); ok {
			longest = max(longest, len(r))
		}
	}
	return orErr(v, st.need(float64(longest)*(float64(len(rows))*sizeSlot+24), "transpose"))
}

// guardExplode guards explode.
func guardExplode(st *runState, v any, _ []any) any {
	if s, ok := v.(string); ok {
		return orErr(v, st.need(float64(len(s))*sizeRune, "explode"))
	}
	return v
}

// guardIndices guards indices, index and rindex: they compare every
// position with the searched sub-sequence, and explode strings first.
func guardIndices(st *runState, v any, args []any) any {
	switch s := v.(type) {
	case string:
		t, ok := args[0].(string)
		if !ok {
			return v
		}
		n, m := utf8.RuneCountInString(s), utf8.RuneCountInString(t)
		if float64(n)*float64(m) > workBudget {
			return st.tooComplex("searching a %d-character string for a %d-character string", n, m)
		}
		return orErr(v, st.need(float64(n+m)*sizeRune, "indices"))
	case []any:
		if len(s) == 0 {
			return v
		}
		sub, ok := args[0].([]any)
		if !ok {
			sub = []any{args[0]}
		}
		if err := st.guardWork(sub, len(s), "array search"); err != nil {
			return err
		}
	}
	return v
}

// guardContains guards contains and inside (checks both operands).
func guardContains(st *runState, v any, args []any) any {
	a, b := v, args[0]
	if !bothContainers(a, b) {
		return v
	}
	sa, err := st.measureOK(a, "contains", st.lim.nodeBudget())
	if err != nil {
		return err
	}
	sb, err := st.measureOK(b, "contains", st.lim.nodeBudget())
	if err != nil {
		return err
	}
	if float64(sa.nodes)*float64(sb.nodes) > workBudget {
		return st.tooComplex("contains between values of %d and %d elements", sa.nodes, sb.nodes)
	}
	return v
}

// guardSort guards sort, unique, min and max (no argument: the input is
// sorted) and _sort_by and friends (argument: the keys).
func guardSort(st *runState, v any, args []any) any {
	keys := v
	if len(args) > 0 {
		keys = args[0]
	}
	xs, ok := keys.([]any)
	if !ok {
		return v
	}
	if _, err := st.measureOK(xs, "sorting", st.lim.nodeBudget()); err != nil {
		return err
	}
	return orErr(v, st.need(float64(len(xs))*sizeSortItem, "sorting"))
}

// guardBsearch guards bsearch, whose comparisons recurse into the target.
func guardBsearch(st *runState, v any, args []any) any {
	if _, err := st.measureOK(args[0], "bsearch", st.lim.nodeBudget()); err != nil {
		return err
	}
	return v
}

// compareOp implements a comparison operator: the guard bounds the
// recursion of gojq.Compare, which is what the native operators call.
func compareOp(pred func(int) bool) func(*runState, any, []any) any {
	return func(st *runState, _ any, args []any) any {
		l, r := args[0], args[1]
		if bothContainers(l, r) {
			if err := st.guardCompare(l, r); err != nil {
				return err
			}
		}
		return pred(gojq.Compare(l, r))
	}
}

// guardCompare bounds the comparison of two arrays or two objects, which
// recurses as deep and works as long as the smaller of them. It walks both
// with growing budgets, so that it costs about the size of the smaller.
func (st *runState) guardCompare(l, r any) error {
	limit := st.lim.nodeBudget()
	for budget := 1 << 10; ; budget *= 16 {
		budget = min(budget, limit)
		sl := measure(l, budget, st.ctx.Done())
		if sl.ok {
			return nil
		}
		sr := measure(r, budget, st.ctx.Done())
		switch {
		case sr.ok:
			return nil
		case budget == limit, sl.deep && sr.deep, sl.canceled || sr.canceled:
			if sl.deep || sl.canceled {
				return st.shapeErr(sl, "comparison", limit)
			}
			return st.shapeErr(sr, "comparison", limit)
		}
	}
}

// bothContainers reports whether l and r are both arrays or both objects,
// the only case where comparisons recurse.
func bothContainers(l, r any) bool {
	switch l.(type) {
	case []any:
		_, ok := r.([]any)
		return ok
	case map[string]any:
		_, ok := r.(map[string]any)
		return ok
	}
	return false
}

// guardToNumber guards tonumber: long digit strings become big integers,
// whose parsing is quadratic.
func guardToNumber(st *runState, v any, _ []any) any {
	if s, ok := v.(string); ok && len(s) > maxNumberText {
		return st.tooComplex("tonumber of a %d-byte string (limit %d)", len(s), maxNumberText)
	}
	return v
}

// fromJSON replaces fromjson: it decodes like the input records (numbers
// become float64, as in jq 1.6, instead of gojq's json.Number whose text is
// kept verbatim and may be a huge integer), within the depth limit of
// encoding/json.
func fromJSON(st *runState, v any, _ []any) any {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("fromjson cannot be applied to: %s (%s)", gojq.TypeOf(v), gojq.Preview(v))
	}
	if err := st.need(float64(len(s))*sizeRune, "fromjson"); err != nil {
		return err
	}
	dec := newDecoder(strings.NewReader(s))
	x, err := decode(dec)
	if err != nil {
		return fmt.Errorf("%v (while parsing '%s')", err, gojq.Preview(s))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("unexpected extra JSON values (while parsing '%s')", gojq.Preview(s))
	}
	return x
}
