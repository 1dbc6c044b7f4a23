package structq

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzQuestion: whatever the arguments and the records, Parse either
// accepts them or says why, and Apply answers an accepted question
// without panicking, as the sandbox calls it (records decoded from JSON).
func FuzzQuestion(f *testing.F) {
	f.Add(`{"where": [{"field": "a.b", "op": "gt", "value": "1.5"}], "sort": {"field": "c", "desc": true}, "limit": 2}`, `[{"a": {"b": "2"}, "c": 1}, {"a": "x"}, 3, null]`)
	f.Add(`{"aggregate": {"op": "sum", "field": "n"}, "group_by": "k"}`, `[{"n": "1e400", "k": [1]}, {"n": -0.5, "k": {"x": 1}}, {"n": "007"}]`)
	f.Add(`{"where": [{"field": "t", "op": "contains", "value": "İ"}], "select": ["t", "u.v"]}`, `[{"t": ["İstanbul", 4]}, {"t": 12.5}]`)
	f.Add(`{"aggregate": {"op": "distinct", "field": "x"}}`, `[{"x": 1}, {"x": "1.0"}, {"x": [1]}, {"x": true}]`)
	f.Fuzz(func(t *testing.T, question, data string) {
		if len(question) > 4096 || len(data) > 1<<16 {
			return
		}
		var args map[string]any
		var records []any
		if json.Unmarshal([]byte(question), &args) != nil || json.Unmarshal([]byte(data), &records) != nil {
			return
		}
		s, err := Parse(args)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		s.Budget = 1024
		out, err := Apply(records, s.Value(), nil)
		if err != nil {
			t.Fatalf("an accepted question failed: %v", err)
		}
		var raw []json.RawMessage
		for _, v := range out {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("unencodable answer: %v", err)
			}
			raw = append(raw, b)
		}
		var fe *FieldsError
		if _, err := s.Answer(raw, 400, func(b []byte) int { return len(b) / 4 }); err != nil && !errors.As(err, &fe) {
			t.Fatalf("the answer does not render: %v", err)
		}
		for _, f := range missingOf(fe) {
			for _, r := range records {
				if pathOf(f).has(r) {
					t.Fatalf("%q is said missing, and %s has it", f, jsonText(r))
				}
			}
		}
	})
}

func missingOf(e *FieldsError) []string {
	if e == nil {
		return nil
	}
	return e.Missing
}
