package structq

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcplro/lro/internal/textlines"
)

// Apply answers the question q (the value [Spec.Value] gave, as the
// sandbox passes it) over records, the slurped records as the engine
// decoded them (projected to [Spec.Paths]). It returns what the program
// outputs, for [Answer] to render:
//
//	{"matched": N, "value": V}                                 aggregate
//	{"matched": N, "total": L, "groups": G, "items": [...]}    select, group_by
//	{"matched": N, "total": L, "groups": 0}, [records...]      records whole
//
// where items are the records or groups after sort and limit, at most
// Spec.Budget bytes of them, L how many there were and G the groups
// before limit. Records output whole are elements of records, which the
// sandbox prints from their lines, L of them. stop is called every few
// thousand records; Apply returns its error.
func Apply(records []any, q any, stop func() error) ([]any, error) {
	m, ok := q.(map[string]any)
	if !ok {
		return nil, errors.New("structq: the question is not an object")
	}
	s, err := Parse(m)
	if err != nil {
		return nil, err
	}
	if b, ok := whole(m["budget"]); ok {
		s.Budget = b
	}
	for i := range s.Where {
		s.Where[i].at = pathOf(s.Where[i].Field)
	}
	var matched []int
	for i, rec := range records {
		if i%4096 == 4095 && stop != nil {
			if err := stop(); err != nil {
				return nil, err
			}
		}
		if s.matches(rec) {
			matched = append(matched, i)
		}
	}
	switch {
	case s.GroupBy != "":
		return []any{s.groups(records, matched)}, nil
	case s.Aggregate != nil:
		a := newAggregator(s.Aggregate.Op)
		p := pathOf(s.Aggregate.Field)
		for _, i := range matched {
			a.add(p.get(records[i]))
		}
		return []any{map[string]any{"matched": len(matched), "value": a.value()}}, nil
	}
	return s.records(records, matched), nil
}

// path is a field as Apply reads it: its keys.
type path []string

func pathOf(f string) path {
	if f == "" {
		return nil
	}
	return strings.Split(f, ".")
}

// get returns the value at p in v, or nil when a key is absent or a step
// is not an object.
func (p path) get(v any) any {
	for _, k := range p {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func (s *Spec) matches(row any) bool {
	for i := range s.Where {
		c := &s.Where[i]
		if !c.holds(c.at.get(row)) {
			return false
		}
	}
	return true
}

// holds reports whether the condition holds of a field's value v.
func (c *Cond) holds(v any) bool {
	switch c.Op {
	case "exists":
		return (v != nil) == c.Value.(bool)
	case "eq":
		return equal(v, c.Value, c.num)
	case "ne":
		return !equal(v, c.Value, c.num)
	case "in":
		for i, x := range c.set {
			if equal(v, x, c.nums[i]) {
				return true
			}
		}
		return false
	case "contains", "matches":
		if list, ok := v.([]any); ok {
			return slices.ContainsFunc(list, c.text)
		}
		return c.text(v)
	}
	o, ok := order(v, c.Value, c.num)
	if !ok {
		return false
	}
	switch c.Op {
	case "lt":
		return o < 0
	case "le":
		return o <= 0
	case "gt":
		return o > 0
	}
	return o >= 0 // ge
}

// text applies contains or matches to a string or a number's text; a
// string is matched in its first textlines.MaxMatch bytes, as grep does.
func (c *Cond) text(v any) bool {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		if n, ok := toNumber(v); ok {
			s = n.decimalText()
		} else {
			return false
		}
	}
	if c.Op == "contains" {
		return containsFold(s, c.lower)
	}
	if len(s) > textlines.MaxMatch {
		n := textlines.MaxMatch
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return c.re.MatchString(s)
}

// records sorts, limits and selects the matched records: the values of
// the selected fields, or the records themselves.
func (s *Spec) records(records []any, matched []int) []any {
	if s.Sort != nil {
		p := pathOf(s.Sort.Field)
		keys := make([]sortKey, len(records))
		for _, i := range matched {
			keys[i] = keyOf(p.get(records[i]))
		}
		sort.SliceStable(matched, func(a, b int) bool {
			c := keys[matched[a]].cmp(keys[matched[b]])
			if s.Sort.Desc {
				return c > 0
			}
			return c < 0
		})
	}
	total := len(matched)
	if s.Limit > 0 {
		total = min(total, s.Limit)
	}
	head := map[string]any{"matched": len(matched), "total": total, "groups": 0}
	if s.Whole() {
		// Printed by the sandbox from the records' lines, as many as its
		// output holds.
		items := make([]any, total)
		for k, i := range matched[:total] {
			items[k] = records[i]
		}
		return []any{head, items}
	}
	paths := make([]path, len(s.Select))
	for k, f := range s.Select {
		paths[k] = pathOf(f)
	}
	items := make([]any, 0, min(total, 256))
	size := 0
	for _, i := range matched[:total] {
		out := make(map[string]any, len(s.Select))
		for k, f := range s.Select {
			out[f] = paths[k].get(records[i])
		}
		if size += len(jsonText(out)) + 1; s.Budget > 0 && size > s.Budget {
			break
		}
		items = append(items, out)
	}
	head["items"] = items
	return []any{head}
}

// groups aggregates the matched rows by the value of group_by, sorted by
// value descending, then key.
func (s *Spec) groups(records []any, matched []int) map[string]any {
	type group struct {
		key   any
		count int
		agg   *aggregator
	}
	byKey := map[string]*group{}
	var order []*group
	gp, ap := pathOf(s.GroupBy), pathOf(s.Aggregate.Field)
	for _, i := range matched {
		k := gp.get(records[i])
		id := key(k)
		g := byKey[id]
		if g == nil {
			g = &group{key: k, agg: newAggregator(s.Aggregate.Op)}
			byKey[id] = g
			order = append(order, g)
		}
		g.count++
		g.agg.add(ap.get(records[i]))
	}
	values := make([]any, len(order))
	for i, g := range order {
		values[i] = g.agg.value()
	}
	idx := make([]int, len(order))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if c := compare(values[idx[a]], values[idx[b]]); c != 0 {
			return c > 0
		}
		return compare(order[idx[a]].key, order[idx[b]].key) < 0
	})
	total := len(idx)
	if s.Limit > 0 {
		total = min(total, s.Limit)
	}
	items := make([]any, 0, min(total, 256))
	size := 0
	for _, i := range idx[:total] {
		item := map[string]any{"key": order[i].key, "value": values[i], "count": order[i].count}
		if size += len(jsonText(item)) + 1; s.Budget > 0 && size > s.Budget {
			break
		}
		items = append(items, item)
	}
	return map[string]any{"matched": len(matched), "total": total, "groups": len(order), "items": items}
}

// aggregator computes one aggregate over the values it is given.
type aggregator struct {
	op    string
	n     int
	sum   decimalSum
	best  sortKey
	seen  map[string]struct{}
	found bool
}

func newAggregator(op string) *aggregator {
	a := &aggregator{op: op}
	if op == "distinct" {
		a.seen = map[string]struct{}{}
	}
	return a
}

// add counts a row whose field holds v (missing: nil).
func (a *aggregator) add(v any) {
	a.n++
	switch a.op {
	case "sum", "avg":
		if n, ok := toNumber(v); ok {
			a.sum.add(n)
		}
	case "min", "max":
		if v == nil {
			return
		}
		k := keyOf(v)
		c := 0
		if a.found {
			c = k.cmp(a.best)
		}
		if !a.found || (a.op == "min" && c < 0) || (a.op == "max" && c > 0) {
			a.best, a.found = k, true
		}
	case "distinct":
		if v != nil {
			a.seen[key(v)] = struct{}{}
		}
	}
}

// value is the aggregate: count the rows, sum and avg their numbers
// (null when none is), min and max their values as they are (null when
// all are missing), distinct the number of different values.
func (a *aggregator) value() any {
	switch a.op {
	case "count":
		return a.n
	case "sum":
		return a.sum.value()
	case "avg":
		return a.sum.avg()
	case "distinct":
		return len(a.seen)
	}
	return a.best.v
}
