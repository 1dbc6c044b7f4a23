package records

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// MarshalText encodes v as JSON a model reads: without HTML escaping, so
// that '>' stays '>' and not \u003e.
func MarshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// LooksJSON reports whether text is shaped like a JSON object or array.
func LooksJSON(text string) bool {
	t := strings.TrimSpace(text)
	return len(t) >= 2 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']')
}

// ClipText cuts s to at most n bytes, on a rune boundary.
func ClipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// CutMarker ends a text that was cut: by the gate, or in a record cut to
// fit a truncated document.
const CutMarker = " …[cut]"
