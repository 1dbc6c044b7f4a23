package structq

import (
	"errors"
	"strings"
)

// Apply answers the question q (the value [Spec.Value] gave, as the
// sandbox passes it) over records, the slurped records as the engine
// decoded them (projected to [Spec.Paths]). It returns what the program
// outputs, for [Spec.Answer] to render:
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
