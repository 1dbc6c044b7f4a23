package structq

import "sort"

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
