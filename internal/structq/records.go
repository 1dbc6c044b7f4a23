package structq

import (
	"cmp"
	"slices"
)

// records sorts, limits and selects the matched records: the values of
// the selected fields, or the records themselves.
func (s *Spec) records(records []any, matched []int) []any {
	if s.Sort != nil {
		p := pathOf(s.Sort.Field)
		keys := make([]sortKey, len(records))
		for _, i := range matched {
			keys[i] = keyOf(p.get(records[i]))
		}
		// Ties keep the file's order: the index is the last key, which
		// an unstable sort (n·log n) orders as a stable one would
		// (n·log² n).
		slices.SortFunc(matched, func(a, b int) int {
			c := keys[a].cmp(keys[b])
			if s.Sort.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
			return cmp.Compare(a, b)
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
	size, cuts := 0, 0
	for _, i := range matched[:total] {
		out := make(map[string]any, len(s.Select))
		for k, f := range s.Select {
			v, cut := cutValue(paths[k].get(records[i]), s.ValueBytes)
			out[f] = v
			if cut {
				cuts++
			}
		}
		if size += len(jsonText(out)) + 1; s.Budget > 0 && size > s.Budget {
			break
		}
		items = append(items, out)
	}
	head["items"] = items
	if cuts > 0 {
		head["cut"] = cuts
	}
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
	slices.SortFunc(idx, func(a, b int) int {
		if c := compare(values[a], values[b]); c != 0 {
			return -c
		}
		if c := compare(order[a].key, order[b].key); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	total := len(idx)
	if s.Limit > 0 {
		total = min(total, s.Limit)
	}
	items := make([]any, 0, min(total, 256))
	size, cuts := 0, 0
	for _, i := range idx[:total] {
		k, cutKey := cutValue(order[i].key, s.ValueBytes)
		v, cutVal := cutValue(values[i], s.ValueBytes)
		if cutKey {
			cuts++
		}
		if cutVal {
			cuts++
		}
		item := map[string]any{"key": k, "value": v, "count": order[i].count}
		if size += len(jsonText(item)) + 1; s.Budget > 0 && size > s.Budget {
			break
		}
		items = append(items, item)
	}
	head := map[string]any{"matched": len(matched), "total": total, "groups": len(order), "items": items}
	if cuts > 0 {
		head["cut"] = cuts
	}
	if !slices.ContainsFunc(order, func(g *group) bool { return !g.agg.empty() }) {
		s.tally(head, records, matched)
	}
	return head
}
