package jqsandbox

import (
	"cmp"
	"slices"
	"strings"

	"github.com/itchyny/gojq"
)

// sort_by and group_by, sorted faster than gojq sorts them: gojq sorts
// with slices.SortStableFunc, an insertion and rotation merge of
// n·log²(n) comparisons (a sort of 100,000 records by date: most of a
// query's time), where the same order comes from slices.SortFunc with
// the index as the last key, in n·log(n). The keys are those gojq
// computes (map([f])), compared as gojq compares them; the output is the
// input's elements themselves, reordered, as gojq's (see lazySort).

// sortOptions defines _sbx_sort_keys and _sbx_group_keys: the input
// array sorted, or grouped, by the keys of its elements given as the
// argument (an array of the same length; the definitions that call them
// make sure of it, and hand anything else to gojq's own).
func sortOptions() []gojq.CompilerOption {
	return []gojq.CompilerOption{
		gojq.WithFunction("_sbx_sort_keys", 1, 1, func(v any, args []any) any {
			vs, _, order := sortedOrder(v, args[0])
			if order == nil {
				return v
			}
			out := make([]any, len(order))
			for i, j := range order {
				out[i] = vs[j]
			}
			return out
		}),
		gojq.WithFunction("_sbx_group_keys", 1, 1, func(v any, args []any) any {
			vs, keys, order := sortedOrder(v, args[0])
			out := []any{}
			if order == nil {
				return out
			}
			var group []any
			for i, j := range order {
				if i > 0 && gojq.Compare(keys[order[i-1]], keys[j]) != 0 {
					out = append(out, group)
					group = nil
				}
				group = append(group, vs[j])
			}
			return append(out, group)
		}),
	}
}

// sortedOrder returns the elements of v, their keys, and the order of
// their indexes by key then index; a nil order for an empty array or
// keys that do not match it (which the definitions rule out).
func sortedOrder(v, k any) (vs, keys []any, order []int) {
	vs, _ = v.([]any)
	keys, _ = k.([]any)
	if len(vs) == 0 || len(vs) != len(keys) {
		return vs, keys, nil
	}
	order = make([]int, len(vs))
	for i := range order {
		order[i] = i
	}
	// Keys of one string each (sort_by(.created)): compared as strings,
	// as gojq compares them, without its type switches.
	strs := make([]string, len(keys))
	for i, key := range keys {
		a, ok := key.([]any)
		if !ok || len(a) != 1 {
			strs = nil
			break
		}
		if strs[i], ok = a[0].(string); !ok {
			strs = nil
			break
		}
	}
	if strs != nil {
		slices.SortFunc(order, func(a, b int) int {
			if c := strings.Compare(strs[a], strs[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		return vs, keys, order
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := gojq.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return vs, keys, order
}

// sortDefs are the definitions that call them: gojq's own, with the fast
// sort for arrays (gojq's _sort_by and _group_by say what is wrong with
// anything else).
const (
	sortByDef  = `if type == "array" then _sbx_sort_keys($k) else _sort_by($k) end`
	groupByDef = `if type == "array" then _sbx_group_keys($k) else _group_by($k) end`
)
