package proxywire

import (
	"encoding/json"
	"testing"
)

func TestRepeats(t *testing.T) {
	type hit struct {
		Score float64 `json:"score"`
		Title string  `json:"title"`
	}
	v := []hit{{1, "a <b> & c"}}
	enc, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		text       string
		structured any
		want       bool
	}{
		{"a Go value and its encoding", string(enc), v, true},
		{"JSON bytes and the same text", `{"a":1}`, json.RawMessage(`{"a":1}`), true},
		{"a byte slice", `[1,2]`, []byte(`[1,2]`), true},
		{"indented text", "{\n  \"a\": 1\n}", json.RawMessage(`{"a":1}`), false},
		{"other key order", `{"b":1,"a":2}`, map[string]int{"a": 2, "b": 1}, false},
		{"text without HTML escapes", `[{"score":1,"title":"a <b> & c"}]`, v, false},
		{"prose", "3 hits", v, false},
		{"empty text", "", json.RawMessage(``), false},
		{"no structured content", `{}`, nil, false},
		{"a value that cannot be encoded", `{}`, map[string]any{"f": func() {}}, false},
	} {
		if got := Repeats(tc.text, tc.structured); got != tc.want {
			t.Errorf("%s: Repeats = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAnnounced(t *testing.T) {
	for _, tc := range []struct {
		experimental map[string]any
		want         bool
	}{
		{map[string]any{Capability: map[string]any{Feature: true}}, true},
		{map[string]any{Capability: map[string]any{}}, false},
		{map[string]any{Capability: map[string]any{Feature: "true"}}, false},
		{map[string]any{Capability: true}, false},
		{map[string]any{"other": map[string]any{Feature: true}}, false},
		{nil, false},
	} {
		if got := Announced(tc.experimental); got != tc.want {
			t.Errorf("Announced(%v) = %v, want %v", tc.experimental, got, tc.want)
		}
	}
}
