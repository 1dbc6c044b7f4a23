package structq

import (
	"strings"
	"unicode/utf8"
)

// CutMarker ends a value an answer shows cut (a long string, or the JSON
// text of a large array or object), as records are cut to fit
// (internal/records.CutMarker).
const CutMarker = " …[cut]"

// cutValue returns v, or, when it takes more than max bytes as JSON, a
// string of at most max bytes that ends in CutMarker: a string's first
// bytes, or the first bytes of an array's or object's JSON text; cut
// reports which. Numbers, booleans and null are short, and kept.
func cutValue(v any, max int) (out any, cut bool) {
	if max <= 0 {
		return v, false
	}
	var text string
	switch x := v.(type) {
	case string:
		if len(x)+2 <= max && (!needsEscapes(x) || len(jsonText(x)) <= max) {
			return v, false
		}
		text = x
	case []any, map[string]any:
		b := jsonText(x)
		if len(b) <= max {
			return v, false
		}
		text = string(b)
	default:
		return v, false
	}
	return cutText(text, max), true
}

// cutText cuts s so that, with CutMarker, its JSON text takes at most max
// bytes (escapes counted), on a rune boundary.
func cutText(s string, max int) string {
	room := max - 2 - len(CutMarker)
	n := 0
	for i, r := range s {
		w := utf8.RuneLen(r)
		switch {
		case r == '"' || r == '\\':
			w = 2
		case r < 0x20 || escaped(r):
			w = 6 // \u00XX, as encoding/json writes them
		}
		if n+w > room {
			return s[:i] + CutMarker
		}
		n += w
	}
	return s + CutMarker // not reached: s is longer than room
}

// needsEscapes reports whether JSON writes s with escapes (its length
// is then not its JSON length less the quotes).
func needsEscapes(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == '"' || r == '\\' || escaped(r) })
}

// escaped reports whether encoding/json writes r as \uXXXX (HTML's
// characters, invalid UTF-8, the line separators).
func escaped(r rune) bool {
	return r == '<' || r == '>' || r == '&' || r == utf8.RuneError || r == '\u2028' || r == '\u2029'
}
