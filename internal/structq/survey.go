package structq

import "encoding/json"

// survey is what Apply's pass over the records learns of the question's
// fields besides the answer, so that an answer never says 0 or null
// without saying why: which fields no record has (an error, see
// [FieldsError]), which conditions no record's value could meet for its
// type ("amount gt 999" where every amount is "N/A"), and what the
// aggregated values were when none could be aggregated. It costs a type
// test a record for each field and condition until the first record that
// settles it, nothing after.
type survey struct {
	fields []path
	names  []string
	seen   []bool
	unseen int // fields not seen yet

	conds   []*Cond
	typed   []bool // a record's value could meet the condition for its type
	example []any  // the first value that could not, for the note
	hasEx   []bool
	untyped int // conditions not typed yet
}

func newSurvey(s *Spec) *survey {
	v := &survey{names: s.Paths()}
	for _, f := range v.names {
		v.fields = append(v.fields, pathOf(f))
	}
	v.seen = make([]bool, len(v.fields))
	v.unseen = len(v.fields)
	for i := range s.Where {
		c := &s.Where[i]
		v.conds = append(v.conds, c)
		typed := c.anyType()
		v.typed = append(v.typed, typed)
		if !typed {
			v.untyped++
		}
	}
	v.example = make([]any, len(v.conds))
	v.hasEx = make([]bool, len(v.conds))
	return v
}

// look notes what rec tells: the fields it has, and the conditions its
// values could meet.
func (v *survey) look(rec any) {
	if v.unseen > 0 {
		for i, p := range v.fields {
			if !v.seen[i] && p.has(rec) {
				v.seen[i] = true
				v.unseen--
			}
		}
	}
	if v.untyped > 0 {
		for i, c := range v.conds {
			if v.typed[i] {
				continue
			}
			x := c.at.get(rec)
			switch {
			case x != nil && c.comparable(x):
				v.typed[i] = true
				v.untyped--
			case x != nil && (!v.hasEx[i] || v.example[i] == nil), !v.hasEx[i] && c.at.has(rec):
				// A value that is not null says more than null.
				v.example[i], v.hasEx[i] = x, true
			}
		}
	}
}

// report adds to head, Apply's first output, what the survey found:
// "missing", the fields no record has; "never", the conditions whose
// field some record has but no value of it could meet, each
// {"where": i, "example": its first value, cut}.
func (v *survey) report(head map[string]any, records int) {
	var missing []any
	for i, seen := range v.seen {
		if !seen {
			missing = append(missing, v.names[i])
		}
	}
	if missing != nil {
		head["missing"] = missing
		head["records"] = records
	}
	var never []any
	for i, typed := range v.typed {
		if !typed && v.hasEx[i] {
			ex, _ := cutValue(v.example[i], maxExampleBytes)
			never = append(never, map[string]any{"where": i, "example": ex})
		}
	}
	if never != nil {
		head["never"] = never
	}
}

// maxExampleBytes bounds the value a note quotes.
const maxExampleBytes = 60

// has reports whether v has the field p: each step an object with the
// key (the value may be null).
func (p path) has(v any) bool {
	if len(p) == 0 {
		return false
	}
	for _, k := range p {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
	}
	return true
}

// anyType reports whether the condition is meaningful whatever the type
// of the field's value: exists, and eq or ne null.
func (c *Cond) anyType() bool {
	return c.Op == "exists" || (c.Op == "eq" || c.Op == "ne") && c.Value == nil
}

// comparable reports whether the condition could hold of a value of x's
// type (x not null), whatever its value: a number (or a string that
// reads as one) for a number, a string for a string, a boolean for a
// boolean; contains and matches test strings and numbers, or the
// elements of an array.
func (c *Cond) comparable(x any) bool {
	switch c.Op {
	case "exists":
		return true
	case "eq", "ne":
		return sameType(x, c.Value, c.num)
	case "in":
		for i, y := range c.set {
			if y == nil || sameType(x, y, c.nums[i]) {
				return true
			}
		}
		return false
	case "contains", "matches":
		if list, ok := x.([]any); ok {
			for _, e := range list {
				if textual(e) {
					return true
				}
			}
			return false
		}
		return textual(x)
	}
	if c.num != nil { // lt le gt ge
		_, ok := toNumber(x)
		return ok
	}
	_, ok := x.(string)
	return ok
}

// sameType reports whether a value x could equal y (yn: y as a number).
func sameType(x, y any, yn *number) bool {
	if yn != nil {
		if _, ok := toNumber(x); ok {
			return true
		}
	}
	switch y.(type) {
	case string:
		_, ok := x.(string)
		return ok
	case bool:
		_, ok := x.(bool)
		return ok
	}
	return false
}

// textual reports whether contains and matches read x: a string or a
// number.
func textual(x any) bool {
	switch x.(type) {
	case string, float64, int, json.Number:
		return true
	}
	_, ok := toNumber(x)
	return ok
}
