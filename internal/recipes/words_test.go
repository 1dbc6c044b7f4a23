package recipes

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestValueWordsOfEveryPrefix: a record is searched for words in its first
// wordScan bytes, which may cut it anywhere (a string, an escape, a key):
// no prefix panics, and every word found is text of a string value of the
// whole record, which a case-insensitive search of it matches.
func TestValueWordsOfEveryPrefix(t *testing.T) {
	for _, rec := range []string{
		`{"id":"n-0001","title":"Note 1 about the deploy","tags":["cache","todo"],"n":3}`,
		`{"k\"ey":"caf\u00e9 au lait \"quoted\" words\\here","nested":{"deep":["alpha beta"]}}`,
		`["plain", "strings here", 12, {"x": "yz"}]`,
		`"a bare string of words"`,
		`"a bare string with an escape\n and \u00e9"`,
		`{"only":"12 34"}`,
		`{"":""}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(rec), &v); err != nil {
			t.Fatalf("%s: %v", rec, err)
		}
		values := strings.ToLower(strings.Join(stringValues(v), "\x00"))
		for n := 0; n <= len(rec); n++ {
			for _, w := range valueWords([]byte(rec[:n])) {
				if !strings.Contains(values, strings.ToLower(w)) {
					t.Errorf("%q cut at %d: word %q is in no string value", rec, n, w)
				}
			}
		}
	}
}

func stringValues(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, stringValues(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range v {
			out = append(out, stringValues(e)...)
		}
		return out
	}
	return nil
}
