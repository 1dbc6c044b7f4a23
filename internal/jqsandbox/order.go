package jqsandbox

import (
	"cmp"
	"slices"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/jsonvalue"
)

// gojq's objects are Go maps, and it prints their keys sorted; jq 1.6
// prints them in insertion order. A run therefore orders the keys of each
// object it outputs from what it knows:
//
//  1. an object of the query with exactly these keys ({id, title} prints
//     id first, as jq does);
//  2. else an input object with exactly these keys, in their input order
//     (a record passed through, or one of its nested objects);
//  3. else the known sequence, query objects first, that covers the most
//     of these keys, closest in size: its keys in its order, then the
//     others (what del(.x), . + {y: 1} or with_entries(...) leave). Those
//     others come after, as jq appends new keys, by their position in the
//     query, then in the input, then by name.
//
// What the order cannot follow: objects whose keys come from the data
// (reduce ... .[$x.name] = ...), which jq orders by insertion, objects of
// more than maxOrderedKeys keys, printed sorted, and the iteration of
// objects (.[], .., paths, tostream, add, map_values), which follows
// gojq's sorted keys. keys_unsorted and to_entries do follow it
// (see the prelude).
type keyOrder struct {
	file  *jsonvalue.KeyOrders // the input's; nil when unknown
	query [][]string           // object constructions of the query
	qrank map[string]int       // first position of a key in query

	memo    map[uint64][]string // by jsonvalue.SetHash
	memoLen int                 // file.Len() when memo was filled
}

// maxOrderedKeys bounds the objects whose keys are ordered: larger ones
// (an INDEX of many records) have no known sequence worth following, and
// print sorted, at the cost of the sort alone.
const maxOrderedKeys = 4096

// maxMemo bounds the key sets whose order a run remembers.
const maxMemo = 4096

func newKeyOrder(file *jsonvalue.KeyOrders, query [][]string) *keyOrder {
	k := &keyOrder{file: file, query: query, qrank: map[string]int{}}
	for _, seq := range query {
		for _, key := range seq {
			if _, ok := k.qrank[key]; !ok {
				k.qrank[key] = len(k.qrank)
			}
		}
	}
	return k
}

// keys returns the keys of m in the order to print them. The result may be
// shared: do not modify it.
func (k *keyOrder) keys(m map[string]any) []string {
	if len(m) < 2 || len(m) > maxOrderedKeys || k == nil || k.file == nil && len(k.query) == 0 {
		return sortedKeys(m)
	}
	if n := k.file.Len(); n != k.memoLen || k.memo == nil || len(k.memo) >= maxMemo {
		// New input sequences may change the answers: forget them. So
		// does a query building objects of ever new keys.
		k.memo, k.memoLen = map[uint64][]string{}, n
	}
	h := jsonvalue.SetHash(m)
	if seq, ok := k.memo[h]; ok && jsonvalue.SameKeys(seq, m) {
		return seq
	}
	seq := k.resolve(h, m)
	k.memo[h] = seq
	return seq
}

func (k *keyOrder) resolve(h uint64, m map[string]any) []string {
	for _, seq := range k.query {
		if jsonvalue.SameKeys(seq, m) {
			return seq
		}
	}
	if seq := k.file.Exact(h, m); seq != nil {
		return seq
	}
	var best []string
	bestCover := 0
	consider := func(seq []string) {
		cover := 0
		for _, key := range seq {
			if _, ok := m[key]; ok {
				cover++
			}
		}
		if cover > bestCover || cover == bestCover && cover > 0 && len(seq) < len(best) {
			best, bestCover = seq, cover
		}
	}
	for _, seq := range k.query {
		consider(seq)
	}
	for seq := range k.file.Sequences() {
		consider(seq)
	}
	out := make([]string, 0, len(m))
	placed := make(map[string]struct{}, len(best))
	for _, key := range best {
		if _, ok := m[key]; ok {
			out = append(out, key)
			placed[key] = struct{}{}
		}
	}
	// The others: by position in the query, then in the input, then by
	// name. Ranks are looked up once per key, not per comparison.
	type ranked struct {
		key        string
		tier, rank int
	}
	var rest []ranked
	for key := range m {
		if _, ok := placed[key]; ok {
			continue
		}
		r := ranked{key: key, tier: 2}
		if q, ok := k.qrank[key]; ok {
			r.tier, r.rank = 0, q
		} else if f, ok := k.file.Rank(key); ok {
			r.tier, r.rank = 1, f
		}
		rest = append(rest, r)
	}
	slices.SortFunc(rest, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(a.rank, b.rank), strings.Compare(a.key, b.key))
	})
	for _, r := range rest {
		out = append(out, r.key)
	}
	return out
}

// keysUnsorted is jq 1.6's keys_unsorted of an object (the prelude calls
// it for objects only): its keys in the order they print.
func keysUnsorted(st *runState, v any, _ []any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return &QueryError{Message: "keys_unsorted: not an object"}
	}
	keys := st.order.keys(m)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// queryObjects returns the keys of the object constructions of q that are
// known before it runs ({id, title}, {"a b": 1}, {$x}), each construction
// in its order, without repeats. Keys computed at run time are left out.
func queryObjects(q *gojq.Query) [][]string {
	var c objectCollector
	c.query(q, 0)
	return c.objects
}

type objectCollector struct{ objects [][]string }

func (c *objectCollector) query(q *gojq.Query, depth int) {
	if q == nil || depth > maxQueryDepth {
		return
	}
	for _, fd := range q.FuncDefs {
		c.query(fd.Body, depth+1)
	}
	c.term(q.Term, depth+1)
	c.query(q.Left, depth+1)
	c.query(q.Right, depth+1)
}

func (c *objectCollector) term(t *gojq.Term, depth int) {
	if t == nil || depth > maxQueryDepth {
		return
	}
	qs := []*gojq.Query{t.Query}
	switch {
	case t.Object != nil:
		var keys []string
		for _, kv := range t.Object.KeyVals {
			if key, ok := staticKey(kv); ok && !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
			qs = append(qs, kv.KeyQuery, kv.Val)
			if kv.KeyString != nil {
				qs = append(qs, kv.KeyString.Queries...)
			}
		}
		if len(keys) > 0 {
			c.objects = append(c.objects, keys)
		}
	case t.Index != nil:
		qs = append(qs, indexQueries(t.Index)...)
	case t.Func != nil:
		qs = append(qs, t.Func.Args...)
	case t.Array != nil:
		qs = append(qs, t.Array.Query)
	case t.Unary != nil:
		c.term(t.Unary.Term, depth+1)
	case t.Str != nil:
		qs = append(qs, t.Str.Queries...)
	case t.If != nil:
		qs = append(qs, t.If.Cond, t.If.Then, t.If.Else)
		for _, e := range t.If.Elif {
			qs = append(qs, e.Cond, e.Then)
		}
	case t.Try != nil:
		qs = append(qs, t.Try.Body, t.Try.Catch)
	case t.Reduce != nil:
		qs = append(qs, t.Reduce.Query, t.Reduce.Start, t.Reduce.Update)
	case t.Foreach != nil:
		qs = append(qs, t.Foreach.Query, t.Foreach.Start, t.Foreach.Update, t.Foreach.Extract)
	case t.Label != nil:
		qs = append(qs, t.Label.Body)
	}
	for _, s := range t.SuffixList {
		qs = append(qs, indexQueries(s.Index)...)
	}
	for _, q := range qs {
		c.query(q, depth+1)
	}
}

func indexQueries(x *gojq.Index) []*gojq.Query {
	if x == nil {
		return nil
	}
	qs := []*gojq.Query{x.Start, x.End}
	if x.Str != nil {
		qs = append(qs, x.Str.Queries...)
	}
	return qs
}

// staticKey returns the key of kv when it is known before the query runs.
func staticKey(kv *gojq.ObjectKeyVal) (string, bool) {
	switch {
	case kv.Key != "":
		return strings.TrimPrefix(kv.Key, "$"), true // {id}, {if: 1}, {$x}
	case kv.KeyString != nil && len(kv.KeyString.Queries) == 0:
		return kv.KeyString.Str, true // {"a b": 1}
	}
	return "", false
}
