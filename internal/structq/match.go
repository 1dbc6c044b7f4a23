package structq

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/mcplro/lro/internal/textlines"
)

// matches reports whether every condition of where holds of a record.
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
