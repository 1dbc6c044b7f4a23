package structq

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// output is Apply's output as the engine encodes it.
type output struct {
	Matched int               `json:"matched"`
	Value   json.RawMessage   `json:"value"`
	Total   int               `json:"total"`
	Groups  int               `json:"groups"`
	Items   []json.RawMessage `json:"items"`
}

// Answer renders the program's outputs (Apply's, as the engine encoded
// them: for records output whole, the array of records after the head,
// cut to what the engine's output held, or absent when none fit) as the
// tool's answer: one line of JSON, {"matched": N, "value": V},
// {"matched": N, "records": [...]} or {"matched": N, "groups": [...]},
// with as many records or groups as budget tokens hold (estimate counts
// them), and a line after it that says what was cut, if anything. Records
// list the selected fields in select's order; groups their key, value and
// count.
func (s *Spec) Answer(outputs []json.RawMessage, budget int, estimate func([]byte) int) (string, error) {
	var o output
	if len(outputs) == 0 || len(outputs) > 2 || json.Unmarshal(outputs[0], &o) != nil {
		return "", fmt.Errorf("internal error: the question's answer is malformed (%d values)", len(outputs))
	}
	if len(outputs) == 2 {
		if err := json.Unmarshal(outputs[1], &o.Items); err != nil {
			return "", fmt.Errorf("internal error: the question's records are malformed: %v", err)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"matched":%d,`, o.Matched)
	if s.Aggregate != nil && s.GroupBy == "" {
		b.WriteString(`"value":`)
		b.Write(orNull(o.Value))
		b.WriteString("}\n")
		return b.String(), nil
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
	return b.String(), nil
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
