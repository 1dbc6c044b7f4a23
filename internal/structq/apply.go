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
	if b, ok := whole(m["value_bytes"]); ok {
		s.ValueBytes = b
	}
	for i := range s.Where {
		s.Where[i].at = pathOf(s.Where[i].Field)
	}
	sv := newSurvey(s)
	var matched []int
	for i, rec := range records {
		if i%4096 == 4095 && stop != nil {
			if err := stop(); err != nil {
				return nil, err
			}
		}
		if sv.unseen > 0 || sv.untyped > 0 { // settled after a record or two
			sv.look(rec)
		}
		if s.matches(rec) {
			matched = append(matched, i)
		}
	}
	var out []any
	switch {
	case s.GroupBy != "":
		out = []any{s.groups(records, matched)}
	case s.Aggregate != nil:
		a := newAggregator(s.Aggregate.Op)
		p := pathOf(s.Aggregate.Field)
		for _, i := range matched {
			a.add(p.get(records[i]))
		}
		v, cut := cutValue(a.value(), s.Budget)
		head := map[string]any{"matched": len(matched), "value": v}
		if cut {
			head["cut"] = 1
		}
		if a.empty() {
			s.tally(head, records, matched)
		}
		out = []any{head}
	default:
		out = s.records(records, matched)
	}
	sv.report(out[0].(map[string]any), len(records))
	return out, nil
}

// tally adds to head, when the aggregate found nothing to aggregate in
// the matched records, what they hold at its field: "present", how many
// have a value there other than null, and "example", the first such
// value, cut, so that the answer can say why its value is null (or 0).
func (s *Spec) tally(head map[string]any, records []any, matched []int) {
	if s.Aggregate.Field == "" || len(matched) == 0 {
		return
	}
	p := pathOf(s.Aggregate.Field)
	present := 0
	var example any
	for _, i := range matched {
		if x := p.get(records[i]); x != nil {
			if present == 0 {
				example, _ = cutValue(x, maxExampleBytes)
			}
			present++
		}
	}
	head["present"] = present
	if present > 0 {
		head["example"] = example
	}
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
