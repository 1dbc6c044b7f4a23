package structq

import (
	"encoding/json"
	"slices"
	"strings"
)

// FuncName is the Go function the sandbox registers for trusted programs
// alone to call: Apply, given the rows and the question. (The sandbox
// reserves _sbx for the names that rewrite checks; this one is simply
// unknown to the queries it compiles with guards.)
const FuncName = "_lro_structq"

// Var is the variable the question is bound to, without '$'.
const Var = "q"

// Whole reports whether the answer is records output whole (no select):
// Apply then chooses them by the tuples, and the engine prints the
// records it chose from their lines, decoded whole (a lazy sort's path).
func (s *Spec) Whole() bool { return s.Aggregate == nil && s.Select == nil }

// Paths returns the fields Apply reads of each record, in the order of
// the tuples Program makes.
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
// question as $q (see [Spec.Value]). It maps each record to the tuple of
// the fields s reads, the only reads the engine's projection sees, and
// hands the tuples to Apply:
//
//	map([.a, first(.b.c?, null)]) | _lro_structq($q)     aggregates, select
//	_lro_structq($q; map([.a, first(.b.c?, null)]))      records output whole
//
// In the second form Apply also gets the records, and outputs those it
// chose, as they are: the sandbox decodes them with the tuples'
// projection and their lines, and prints each chosen record from its
// line (a lazy sort's path). A record that is not an object gives an
// empty tuple (every field missing), and a path through a value that is
// not an object gives null. The program depends only on the fields, so
// that one compiled program serves every value of a condition.
func (s *Spec) Program() string {
	q := "$" + Var
	if s.Whole() {
		return FuncName + "(" + q + ";" + s.tuples() + ")"
	}
	return s.tuples() + "|" + FuncName + "(" + q + ")"
}

// tuples is the program's map of each record to its fields.
func (s *Spec) tuples() string {
	if len(s.Paths()) == 0 {
		return "map(null)" // count: no field read
	}
	var b strings.Builder
	b.WriteString(`map(if type=="object" then [`)
	for i, f := range s.Paths() {
		if i > 0 {
			b.WriteByte(',')
		}
		keys := strings.Split(f, ".")
		if len(keys) > 1 {
			b.WriteString("first(")
		}
		b.WriteByte('.')
		for _, k := range keys {
			// A JSON string is a jq string literal: it never holds \(.
			q, _ := json.Marshal(k)
			b.WriteByte('[')
			b.Write(q)
			b.WriteByte(']')
		}
		if len(keys) > 1 {
			b.WriteString("?,null)")
		}
	}
	b.WriteString(`] else [] end)`)
	return b.String()
}

// Value returns s in the form Parse reads, for the engine to bind as $q
// (budget added: Apply's bound on what it returns).
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
	return v
}
