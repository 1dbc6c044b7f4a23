package jqsandbox

import (
	"encoding/json"
	"math/big"
	"reflect"

	"github.com/itchyny/gojq"
)

// guardSetpath guards an update of the path args[0] of v (setpath and the
// assignment operators): setting index i of an array allocates i+1 slots at
// once, and the update recurses along the path.
func guardSetpath(st *runState, v any, args []any) any {
	path, ok := args[0].([]any)
	if !ok {
		return v
	}
	if len(path) > maxDepth {
		return st.tooComplex("path of %d components (limit %d)", len(path), maxDepth)
	}
	var n float64
	cur := v
loop:
	for _, c := range path {
		switch c := c.(type) {
		case string:
			m, _ := cur.(map[string]any)
			x, ok := m[c]
			if !ok {
				n += sizeMapEntry
			}
			cur = x
		case int, float64, *big.Int, json.Number:
			i, _ := gojq.ToInt(c)
			a, isArray := cur.([]any)
			if !isArray && cur != nil {
				break loop // gojq reports the type error
			}
			if i >= len(a) {
				n += (float64(i) + 1) * sizeSlot
			}
			cur = nil
			if 0 <= i && i < len(a) {
				cur = a[i]
			}
		default:
			break loop
		}
	}
	return orErr(v, st.need(n, "setpath"))
}

// guardGetpath guards getpath: an array component searches for a
// sub-array. It returns true, to be used as an if condition (which keeps
// getpath usable in path expressions).
func guardGetpath(st *runState, v any, args []any) any {
	path, _ := args[0].([]any)
	for _, c := range path {
		if err, ok := guardIndexValue(st, c, nil).(error); ok {
			return err
		}
	}
	return true
}

// guardIndexValue guards .[x] when x is computed: an array x searches for
// a sub-array, comparing it at every position.
func guardIndexValue(st *runState, v any, _ []any) any {
	if a, ok := v.([]any); ok {
		if _, err := st.measureOK(a, "indexing with an array", maxIndexNodes); err != nil {
			return err
		}
	}
	return v
}

// guardDelpaths guards delpaths: it sorts the paths (comparing them) and
// then walks the whole value to drop the deleted slots.
func guardDelpaths(st *runState, v any, args []any) any {
	paths, ok := args[0].([]any)
	if !ok {
		return v
	}
	for _, p := range paths {
		if p, ok := p.([]any); ok && len(p) > maxDepth {
			return st.tooComplex("path of %d components (limit %d)", len(p), maxDepth)
		}
	}
	if _, err := st.measureOK(paths, "delpaths", st.lim.nodeBudget()); err != nil {
		return err
	}
	if _, err := st.measureOK(v, "delpaths", st.lim.nodeBudget()); err != nil {
		return err
	}
	return v
}

// guardDelete guards the deletion of the paths whose update was empty in
// _modify (v is the value updated). The check is done once per value.
func guardDelete(st *runState, v any, _ []any) any {
	if sameValue(v, st.deleteChecked) {
		return v
	}
	if _, err := st.measureOK(v, "deleting paths", st.lim.nodeBudget()); err != nil {
		return err
	}
	st.deleteChecked = v
	return v
}

// sameValue reports whether a and b are the same array or object (not
// merely equal).
func sameValue(a, b any) bool {
	switch a.(type) {
	case []any, map[string]any:
		switch b.(type) {
		case []any, map[string]any:
			x, y := reflect.ValueOf(a), reflect.ValueOf(b)
			return x.Kind() == y.Kind() && x.Pointer() == y.Pointer() && x.Len() == y.Len()
		}
	}
	return false
}

// guardTimeFormat guards strftime: every directive may be padded to 1024
// bytes.
func guardTimeFormat(st *runState, v any, args []any) any {
	if f, ok := args[0].(string); ok && len(f) > maxTimeFormat {
		return st.tooComplex("time format of %d bytes (limit %d)", len(f), maxTimeFormat)
	}
	return v
}
