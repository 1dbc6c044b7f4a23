package structq

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcplro/lro/internal/textlines"
)

// Names are the arguments of a structured question, in the order the
// tool's schema lists them.
var Names = []string{"where", "select", "sort", "limit", "aggregate", "group_by"}

// Ops are the operators of a where condition.
var Ops = []string{"eq", "ne", "lt", "le", "gt", "ge", "contains", "matches", "in", "exists"}

// Aggregates are the operators of aggregate.
var Aggregates = []string{"count", "sum", "avg", "min", "max", "distinct"}

// Bounds on a question, checked before anything runs: each argument comes
// from a model that may be prompt-injected.
const (
	maxConds      = 32   // conditions in where
	maxSelect     = 64   // paths in select
	maxPathBytes  = 256  // a dotted path
	maxPathSteps  = 16   // keys in a dotted path
	maxValueBytes = 4096 // a condition's string value (a pattern: textlines.MaxPattern)
	maxInValues   = 256  // the values of an in condition
	maxLimit      = 1_000_000
	// maxWhereBytes bounds the values of all conditions together, as
	// lro_extract bounds a query's params: the question travels to a
	// worker in one request.
	maxWhereBytes = 64 << 10
)

// Spec is a structured question, its arguments checked.
type Spec struct {
	Where  []Cond
	Select []string // dotted paths to output; none: the whole record
	Sort   *Sort
	Limit  int // 0: no limit
	// Aggregate, when set, answers one value (or one a group).
	Aggregate *Aggregate
	GroupBy   string
	// Budget bounds the bytes of records or groups Apply returns (0: no
	// bound): only a threshold's worth is shown, and the engine's output
	// is capped a little above that.
	Budget int
	// ValueBytes bounds, when set, each value a record or group shows (a
	// selected field, a group's key or value): a longer one is cut,
	// ending in CutMarker, so that a long text leaves room for the
	// others. An aggregate's single value is cut to Budget.
	ValueBytes int

	paths []string // see Paths, once computed
}

// Cond is a condition of where.
type Cond struct {
	Field string
	Op    string
	Value any

	at    path           // where Apply reads the field
	num   *number        // Value as a number, for comparisons
	lower string         // contains: Value lower-cased
	re    *regexp.Regexp // matches
	set   []any          // in
	nums  []*number      // in: each value as a number
}

// Sort orders records by a field.
type Sort struct {
	Field string
	Desc  bool
}

// Aggregate is an aggregation over a field (none for count).
type Aggregate struct {
	Op    string
	Field string
}

// Records reports whether the answer is records (no aggregate).
func (s *Spec) Records() bool { return s.Aggregate == nil }

// Present reports whether args hold any structured argument.
func Present(args map[string]any) bool {
	for _, n := range Names {
		if v, ok := args[n]; ok && v != nil {
			return true
		}
	}
	return false
}

// Parse checks the structured arguments of a call (args as the host SDK
// decoded them from JSON) and returns the question. An error names the
// argument at fault and says what it must be.
func Parse(args map[string]any) (*Spec, error) {
	s := &Spec{}
	if v, ok := args["where"]; ok && v != nil {
		if err := s.parseWhere(v); err != nil {
			return nil, err
		}
	}
	if v, ok := args["select"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok || len(list) == 0 || len(list) > maxSelect {
			return nil, fmt.Errorf("select must be an array of 1 to %d field paths such as [\"id\", \"trace.parent\"], got %s", maxSelect, echo(v))
		}
		for i, f := range list {
			p, err := field(fmt.Sprintf("select[%d]", i), f)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(s.Select, p) {
				s.Select = append(s.Select, p)
			}
		}
	}
	if v, ok := args["sort"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("sort must be an object such as {\"field\": \"created\", \"desc\": true}, got %s", echo(v))
		}
		if err := only("sort", m, "field", "desc"); err != nil {
			return nil, err
		}
		f, err := field("sort.field", m["field"])
		if err != nil {
			return nil, err
		}
		s.Sort = &Sort{Field: f}
		if d, ok := m["desc"]; ok && d != nil {
			if s.Sort.Desc, ok = d.(bool); !ok {
				return nil, fmt.Errorf("sort.desc must be true or false, got %s", echo(d))
			}
		}
	}
	if v, ok := args["limit"]; ok && v != nil {
		n, ok := whole(v)
		if !ok || n < 1 || n > maxLimit {
			return nil, fmt.Errorf("limit must be a whole number from 1 to %d, got %s", maxLimit, echo(v))
		}
		s.Limit = n
	}
	if v, ok := args["aggregate"]; ok && v != nil {
		if err := s.parseAggregate(v); err != nil {
			return nil, err
		}
	}
	if v, ok := args["group_by"]; ok && v != nil {
		f, err := field("group_by", v)
		if err != nil {
			return nil, err
		}
		s.GroupBy = f
	}
	return s, s.check()
}

// check rejects arguments that do not go together.
func (s *Spec) check() error {
	switch {
	case s.GroupBy != "" && s.Aggregate == nil:
		return fmt.Errorf("group_by goes with aggregate: add aggregate {\"op\": \"count\"} to count each group")
	case s.Aggregate != nil && s.Select != nil:
		return fmt.Errorf("select goes with records, not with aggregate: drop one of them")
	case s.Aggregate != nil && s.Sort != nil:
		return fmt.Errorf("sort goes with records, not with aggregate (groups come sorted by value): drop one of them")
	case s.Aggregate != nil && s.GroupBy == "" && s.Limit > 0:
		return fmt.Errorf("limit goes with records or group_by, not with a single aggregate: drop one of them")
	}
	return nil
}

func (s *Spec) parseWhere(v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("where must be an array of conditions such as [{\"field\": \"status\", \"op\": \"eq\", \"value\": \"paid\"}], got %s", echo(v))
	}
	if len(list) > maxConds {
		return fmt.Errorf("where has %d conditions; at most %d", len(list), maxConds)
	}
	size := 0
	for i, e := range list {
		name := fmt.Sprintf("where[%d]", i)
		m, ok := e.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be an object {\"field\", \"op\", \"value\"}, got %s", name, echo(e))
		}
		if err := only(name, m, "field", "op", "value"); err != nil {
			return err
		}
		f, err := field(name+".field", m["field"])
		if err != nil {
			return err
		}
		op, _ := m["op"].(string)
		if !slices.Contains(Ops, op) {
			return fmt.Errorf("%s.op must be one of %s, got %s", name, strings.Join(Ops, " "), echo(m["op"]))
		}
		c := Cond{Field: f, Op: op, Value: m["value"]}
		if err := c.prepare(name + ".value"); err != nil {
			return err
		}
		s.Where = append(s.Where, c)
		if size += len(echoJSON(c.Value)); size > maxWhereBytes {
			return fmt.Errorf("where's values take more than %d bytes in all; ask with fewer or shorter values", maxWhereBytes)
		}
	}
	return nil
}

// prepare checks a condition's value for its op and readies what
// matching needs.
func (c *Cond) prepare(name string) error {
	v, hasValue := c.Value, c.Value != nil
	switch c.Op {
	case "exists":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s must be true or false for exists, got %s", name, echo(v))
		}
	case "contains", "matches":
		str, ok := v.(string)
		if !ok || str == "" {
			return fmt.Errorf("%s must be a non-empty string for %s, got %s", name, c.Op, echo(v))
		}
		if len(str) > maxValueBytes {
			return fmt.Errorf("%s is %d bytes long; at most %d", name, len(str), maxValueBytes)
		}
		if c.Op == "contains" {
			c.lower = strings.ToLower(str)
			return nil
		}
		re, err := (textlines.Query{Pattern: str}).Regexp()
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		c.re = re
	case "in":
		list, ok := v.([]any)
		if !ok || len(list) == 0 || len(list) > maxInValues {
			return fmt.Errorf("%s must be an array of 1 to %d values for in, got %s", name, maxInValues, echo(v))
		}
		for i, e := range list {
			if err := scalar(fmt.Sprintf("%s[%d]", name, i), e); err != nil {
				return err
			}
			c.set = append(c.set, e)
			c.nums = append(c.nums, asNumber(e))
		}
	default: // eq ne lt le gt ge
		if !hasValue && c.Op != "eq" && c.Op != "ne" {
			return fmt.Errorf("%s is required for %s", name, c.Op)
		}
		if err := scalar(name, v); err != nil {
			return err
		}
		if _, ok := v.(bool); ok && c.Op != "eq" && c.Op != "ne" {
			return fmt.Errorf("%s must be a number or a string for %s (nothing is less or greater than true or false), got %s", name, c.Op, echo(v))
		}
		c.num = asNumber(v)
	}
	return nil
}

// scalar accepts a string (bounded), a number, a boolean or null.
func scalar(name string, v any) error {
	switch x := v.(type) {
	case nil, bool, float64, int, json.Number:
		return nil
	case string:
		if len(x) > maxValueBytes {
			return fmt.Errorf("%s is %d bytes long; at most %d", name, len(x), maxValueBytes)
		}
		return nil
	}
	return fmt.Errorf("%s must be a string, a number, true, false or null, got %s", name, echo(v))
}

func (s *Spec) parseAggregate(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("aggregate must be an object such as {\"op\": \"sum\", \"field\": \"amount\"}, got %s", echo(v))
	}
	if err := only("aggregate", m, "op", "field"); err != nil {
		return err
	}
	op, _ := m["op"].(string)
	if !slices.Contains(Aggregates, op) {
		return fmt.Errorf("aggregate.op must be one of %s, got %s", strings.Join(Aggregates, " "), echo(m["op"]))
	}
	s.Aggregate = &Aggregate{Op: op}
	f, present := m["field"]
	if op == "count" && (!present || f == nil) {
		return nil
	}
	if op == "count" {
		return fmt.Errorf("aggregate.field goes with sum, avg, min, max or distinct; count counts records")
	}
	var err error
	s.Aggregate.Field, err = field("aggregate.field", f)
	return err
}
