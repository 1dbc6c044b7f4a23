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
// sandbox passes it) over rows: the records themselves when [Spec.Whole],
// else each record's tuple of the values of [Spec.Paths], as [Program]
// makes them. It returns, for [Answer] to render:
//
//	{"matched": N, "value": V}                                  aggregate
//	{"matched": N, "total": L, "groups": G, "items": [...]}     records or groups
//
// where items are the records or groups after sort and limit, at most
// Spec.Budget bytes of them, L how many there were and G the groups before
// limit. stop is called every few thousand rows; Apply returns its error.
func Apply(rows []any, q any, stop func() error) (any, error) {
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
		s.Where[i].at = s.pathOf(s.Where[i].Field)
	}
	get := s.getter()
	var matched []int
	for i, row := range rows {
		if i%4096 == 4095 && stop != nil {
			if err := stop(); err != nil {
				return nil, err
			}
		}
		if s.matches(row, get) {
			matched = append(matched, i)
		}
	}
	switch {
	case s.GroupBy != "":
		return s.groups(rows, matched, get), nil
	case s.Aggregate != nil:
		a := newAggregator(s.Aggregate.Op)
		path := s.pathOf(s.Aggregate.Field)
		for _, i := range matched {
			a.add(get(rows[i], path))
		}
		return map[string]any{"matched": len(matched), "value": a.value()}, nil
	}
	return s.records(rows, matched, get), nil
}

// getter returns how to read a field of a row: by walking a whole record,
// or at the field's position in the row's tuple.
func (s *Spec) getter() func(row any, p path) any {
	if s.Whole() {
		return func(row any, p path) any { return walk(row, p.keys) }
	}
	return func(row any, p path) any {
		t, _ := row.([]any)
		if p.index >= 0 && p.index < len(t) {
			return t[p.index]
		}
		return nil
	}
}

// path is a field as Apply reads it.
type path struct {
	keys  []string
	index int // in the tuple of Spec.Paths
}

func (s *Spec) pathOf(f string) path {
	return path{keys: strings.Split(f, "."), index: slices.Index(s.Paths(), f)}
}

func (s *Spec) matches(row any, get func(any, path) any) bool {
	for i := range s.Where {
		c := &s.Where[i]
		if !c.holds(get(row, c.at)) {
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
		if n := toNumber(v); n != nil {
			s = n.decimalText()
		} else {
			return false
		}
	}
	if c.Op == "contains" {
		return strings.Contains(strings.ToLower(s), c.lower)
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

// records sorts, limits and selects the matched rows.
func (s *Spec) records(rows []any, matched []int, get func(any, path) any) map[string]any {
	if s.Sort != nil {
		p := s.pathOf(s.Sort.Field)
		keys := make([]any, len(rows))
		for _, i := range matched {
			keys[i] = get(rows[i], p)
		}
		sort.SliceStable(matched, func(a, b int) bool {
			c := compare(keys[matched[a]], keys[matched[b]])
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
	var paths []path
	for _, f := range s.Select {
		paths = append(paths, s.pathOf(f))
	}
	items := make([]any, 0, min(total, 256))
	size := 0
	for _, i := range matched[:total] {
		item := rows[i]
		if s.Select != nil {
			out := make(map[string]any, len(paths))
			for k, p := range paths {
				out[s.Select[k]] = get(rows[i], p)
			}
			item = out
		}
		if size += len(jsonText(item)) + 1; s.Budget > 0 && size > s.Budget {
			break
		}
		items = append(items, item)
	}
	return map[string]any{"matched": len(matched), "total": total, "groups": 0, "items": items}
}

// groups aggregates the matched rows by the value of group_by, sorted by
// value descending, then key.
func (s *Spec) groups(rows []any, matched []int, get func(any, path) any) map[string]any {
	type group struct {
		key   any
		count int
		agg   *aggregator
	}
	byKey := map[string]*group{}
	var order []*group
	gp, ap := s.pathOf(s.GroupBy), s.pathOf(s.Aggregate.Field)
	for _, i := range matched {
		k := get(rows[i], gp)
		id := key(k)
		g := byKey[id]
		if g == nil {
			g = &group{key: k, agg: newAggregator(s.Aggregate.Op)}
			byKey[id] = g
			order = append(order, g)
		}
		g.count++
		g.agg.add(get(rows[i], ap))
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
	best  any
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
		if n := toNumber(v); n != nil {
			a.sum.add(n)
		}
	case "min", "max":
		if v == nil {
			return
		}
		c := 0
		if a.found {
			c = compare(v, a.best)
		}
		if !a.found || (a.op == "min" && c < 0) || (a.op == "max" && c > 0) {
			a.best, a.found = v, true
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
	return a.best
}
