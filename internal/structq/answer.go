package structq

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// output is Apply's output as the engine encodes it.
type output struct {
	Matched int               `json:"matched"`
	Value   json.RawMessage   `json:"value"`
	Total   int               `json:"total"`
	Groups  int               `json:"groups"`
	Items   []json.RawMessage `json:"items"`
	// What the pass learned besides (see survey and Spec.tally).
	Missing []string `json:"missing"`
	Records int      `json:"records"`
	Never   []struct {
		Where   int             `json:"where"`
		Example json.RawMessage `json:"example"`
	} `json:"never"`
	Cut     int             `json:"cut"`
	Present *int            `json:"present"`
	Example json.RawMessage `json:"example"`
}

// Answer renders the program's outputs (Apply's, as the engine encoded
// them: for records output whole, the array of records after the head,
// cut to what the engine's output held, or absent when none fit) as the
// tool's answer: one line of JSON, {"matched": N, "value": V},
// {"matched": N, "records": [...]} or {"matched": N, "groups": [...]},
// with as many records or groups as budget tokens hold (estimate counts
// them), and lines after it that say what was cut, if anything, and why
// a value is empty where the records' types explain it. Records list the
// selected fields in select's order; groups their key, value and count.
// A single value longer than the budget is cut, ending in CutMarker.
//
// A field of the question that no record has is a *[FieldsError].
func (s *Spec) Answer(outputs []json.RawMessage, budget int, estimate func([]byte) int) (string, error) {
	var o output
	if len(outputs) == 0 {
		// Apply bounds what it outputs below the engine's cap; should
		// that fail, the model learns what to do, not that we erred.
		return "", fmt.Errorf("the answer to this question is larger than lro_extract returns; narrow where, select fewer fields or lower limit")
	}
	if len(outputs) > 2 || json.Unmarshal(outputs[0], &o) != nil {
		return "", fmt.Errorf("internal error: the question's answer is malformed (%d values)", len(outputs))
	}
	if len(o.Missing) > 0 {
		e := &FieldsError{Records: o.Records}
		for _, f := range s.fieldsInOrder() { // as the arguments name them
			if slices.Contains(o.Missing, f) && !slices.Contains(e.Missing, f) {
				e.Missing = append(e.Missing, f)
				e.Args = append(e.Args, s.argOf(f))
			}
		}
		return "", e
	}
	if len(outputs) == 2 {
		if err := json.Unmarshal(outputs[1], &o.Items); err != nil {
			return "", fmt.Errorf("internal error: the question's records are malformed: %v", err)
		}
	}
	notes := s.notes(&o)
	budget -= estimate([]byte(notes))
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"matched":%d,`, o.Matched)
	if s.Aggregate != nil && s.GroupBy == "" {
		head := b.Len()
		b.WriteString(`"value":`)
		b.Write(orNull(o.Value))
		b.WriteString("}\n")
		if estimate(b.Bytes()) > budget {
			if o.Cut == 0 {
				notes += cutNote
				budget -= estimate([]byte(cutNote))
			}
			b.Truncate(head)
			b.WriteString(`"value":`)
			b.Write(fitValue(o.Value, func(v []byte) int { return estimate(v) + estimate(b.Bytes()) + 1 }, budget))
			b.WriteString("}\n")
		}
		return b.String() + notes, nil
	}
	noun := "records"
	if s.GroupBy != "" {
		noun = "groups"
	}
	b.WriteString(`"` + noun + `":[`)
	budget -= estimate(b.Bytes()) + 1
	shown := 0
	for _, item := range o.Items {
		start := b.Len()
		if shown > 0 {
			b.WriteByte(',')
		}
		if err := s.writeItem(&b, item); err != nil {
			return "", err
		}
		t := estimate(b.Bytes()[start:])
		if t > budget {
			b.Truncate(start)
			break
		}
		budget -= t
		shown++
	}
	b.WriteString("]}\n")
	if shown < o.Total {
		how := "lower limit, narrow where, or select fewer fields"
		if noun == "groups" {
			how = "lower limit or narrow where"
		}
		fmt.Fprintf(&b, "[lro_extract: showing %d of %d %s (%d records matched), as many as fit; %s to see the rest]\n", shown, o.Total, noun, o.Matched, how)
	}
	if noun == "groups" && o.Groups > o.Total {
		fmt.Fprintf(&b, "[lro_extract: the first %d of %d groups, as limit asked]\n", o.Total, o.Groups)
	}
	return b.String() + notes, nil
}

// notes says what the pass found that the answer's numbers do not: the
// conditions no value could meet for its type, an aggregate with nothing
// to aggregate, values cut.
func (s *Spec) notes(o *output) string {
	var b strings.Builder
	for _, n := range o.Never {
		if n.Where < 0 || n.Where >= len(s.Where) {
			continue
		}
		c := s.Where[n.Where]
		holds := "no record"
		if c.Op == "ne" {
			holds = "every record"
		}
		wants, takes := c.types()
		fmt.Fprintf(&b, "[lro_extract: where[%d] (%s %s %s) holds for %s: it compares %s, and no record's %s is %s (e.g. %s)]\n",
			n.Where, c.Field, c.Op, clip(echoJSON(c.Value)), holds, wants, c.Field, takes, orNull(n.Example))
	}
	if o.Present != nil && o.Matched > 0 && s.Aggregate != nil {
		a := s.Aggregate
		what := "the " + a.Op + " is null"
		switch {
		case a.Op == "distinct" && s.GroupBy != "":
			what = "each group counts 0 values"
		case a.Op == "distinct":
			what = "it counts 0 values"
		case s.GroupBy != "":
			what = "each group's " + a.Op + " is null"
		}
		if *o.Present == 0 {
			fmt.Fprintf(&b, "[lro_extract: none of the %d matched records has a value at %s (other records do), so %s]\n", o.Matched, a.Field, what)
		} else {
			fmt.Fprintf(&b, "[lro_extract: none of the %d matched records has a number at %s, nor a string that reads as one (e.g. %s), so %s]\n", o.Matched, a.Field, orNull(o.Example), what)
		}
	}
	if o.Cut > 0 {
		b.WriteString(cutNote)
	}
	return b.String()
}

// cutNote says that values are cut (see cutValue).
const cutNote = "[lro_extract: long values are cut, each ending in \"" + CutMarker + "\"; a query (e.g. .field[0:4000]) reads more of one]\n"

// types says what a condition compares its field with, and what a
// value must be for the condition to hold, for a note.
func (c *Cond) types() (wants, takes string) {
	_, isString := c.Value.(string)
	switch {
	case c.Op == "contains" || c.Op == "matches":
		return "text", "a string, a number or an array of them"
	case c.Op == "in":
		return "the values of in", "of their types"
	case c.num != nil && isString && (c.Op == "eq" || c.Op == "ne"):
		return "a number", "a number or a string"
	case c.num != nil:
		return "a number", "a number or a string that reads as one"
	case isString:
		return "a string", "a string"
	}
	return "a boolean", "true or false"
}

// fitValue returns the JSON text of v (a string, or the JSON text of an
// array or object, which does not fit) cut as cutText cuts, as long as
// cost, the tokens of the answer with it, stays within budget: found by
// bisection, a few encodings of at most the engine's output.
func fitValue(v json.RawMessage, cost func([]byte) int, budget int) []byte {
	var text string
	if json.Unmarshal(v, &text) != nil {
		text = string(v)
	}
	lo, hi := 0, len(jsonText(text)) // the longest that fits is in [lo, hi)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if cost(jsonText(cutText(text, mid))) <= budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	return jsonText(cutText(text, lo))
}

// writeItem writes a record with its selected fields in select's order,
// a group as key, value, count, and a whole record as the engine printed
// it.
func (s *Spec) writeItem(b *bytes.Buffer, item json.RawMessage) error {
	var keys []string
	switch {
	case s.GroupBy != "":
		keys = []string{"key", "value", "count"}
	case s.Select != nil:
		keys = s.Select
	default:
		b.Write(item)
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(item, &m); err != nil {
		return fmt.Errorf("internal error: an item of the question's answer is malformed: %v", err)
	}
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		q, _ := json.Marshal(k)
		b.Write(q)
		b.WriteByte(':')
		b.Write(orNull(m[k]))
	}
	b.WriteByte('}')
	return nil
}

func orNull(v json.RawMessage) []byte {
	if len(v) == 0 {
		return []byte("null")
	}
	return v
}
