package structq

import (
	"encoding/json"
	"slices"
)

// The Go functions the sandbox registers for trusted programs alone to
// call (the sandbox reserves _sbx for the names its rewrite checks; these
// are simply unknown to the queries it compiles with guards):
// FuncName(q; paths) answers the question q over the slurped records, and
// RecordsFuncName(q; paths) also outputs records whole. paths, a constant
// array of the dotted fields the question reads, tells the sandbox's
// projection what to decode of each record.
const (
	FuncName        = "_lro_structq"
	RecordsFuncName = "_lro_structq_records"
)

// Var is the variable the question is bound to, without '$'.
const Var = "q"

// Whole reports whether the answer is records output whole (no select):
// the sandbox then prints the records Apply chose from their lines,
// decoded whole (a lazy sort's path).
func (s *Spec) Whole() bool { return s.Aggregate == nil && s.Select == nil }

// Paths returns the fields Apply reads of each record.
func (s *Spec) Paths() []string {
	if s.paths != nil {
		return s.paths
	}
	s.paths = []string{}
	add := func(f string) {
		if f != "" && !slices.Contains(s.paths, f) {
			s.paths = append(s.paths, f)
		}
	}
	for _, f := range s.Select {
		add(f)
	}
	for _, c := range s.Where {
		add(c.Field)
	}
	if s.Sort != nil {
		add(s.Sort.Field)
	}
	if s.Aggregate != nil {
		add(s.Aggregate.Field)
	}
	add(s.GroupBy)
	return s.paths
}

// Program returns the jq program that answers s in slurp mode, given the
// question as $q (see [Spec.Value]): one call of a Go function over the
// records, which the sandbox decodes with the fields it names only,
//
//	_lro_structq($q;["status","trace.parent"])
//
// and, for records output whole, _lro_structq_records. The program
// depends only on the fields, so that one compiled program serves every
// value of a condition.
func (s *Spec) Program() string {
	name := FuncName
	if s.Whole() {
		name = RecordsFuncName
	}
	// A JSON string is a jq string literal: it never holds \(.
	paths, _ := json.Marshal(s.Paths())
	return name + "($" + Var + ";" + string(paths) + ")"
}

// Value returns s in the form Parse reads, for the engine to bind as $q
// (budget and value_bytes added: Apply's bounds on what it returns).
func (s *Spec) Value() map[string]any {
	v := map[string]any{}
	if s.Where != nil {
		where := make([]any, len(s.Where))
		for i, c := range s.Where {
			where[i] = map[string]any{"field": c.Field, "op": c.Op, "value": c.Value}
		}
		v["where"] = where
	}
	if s.Select != nil {
		sel := make([]any, len(s.Select))
		for i, f := range s.Select {
			sel[i] = f
		}
		v["select"] = sel
	}
	if s.Sort != nil {
		v["sort"] = map[string]any{"field": s.Sort.Field, "desc": s.Sort.Desc}
	}
	if s.Limit > 0 {
		v["limit"] = s.Limit
	}
	if s.Aggregate != nil {
		a := map[string]any{"op": s.Aggregate.Op}
		if s.Aggregate.Field != "" {
			a["field"] = s.Aggregate.Field
		}
		v["aggregate"] = a
	}
	if s.GroupBy != "" {
		v["group_by"] = s.GroupBy
	}
	if s.Budget > 0 {
		v["budget"] = s.Budget
	}
	if s.ValueBytes > 0 {
		v["value_bytes"] = s.ValueBytes
	}
	return v
}
