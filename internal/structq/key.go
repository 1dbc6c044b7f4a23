package structq

import (
	"strconv"
	"strings"
)

// key returns what tells values apart for distinct and group_by: numbers
// (and strings that read as numbers) by their exact value, so that "1.50"
// and 1.5 are one value, everything else by its JSON text.
func key(v any) string {
	if n, ok := toNumber(v); ok {
		return "#" + canonicalDecimal(n.decimalText())
	}
	switch x := v.(type) {
	case string:
		return `"` + x
	case nil:
		return "null"
	}
	return string(jsonText(v))
}

// canonicalDecimal writes a decimal's exact value one way: its significant
// digits and the power of ten of the last one ("1.50", "15e-1" and
// "0.15e1" all give "15e-1"; zero gives "0").
func canonicalDecimal(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil { // beyond int: keep the text
			return s
		}
		exp, s = e, s[:i]
	}
	whole, frac, _ := strings.Cut(s, ".")
	digits := whole + frac
	exp -= len(frac)
	digits = strings.TrimLeft(digits, "0")
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	if trimmed == "" {
		return "0"
	}
	out := trimmed + "e" + strconv.Itoa(exp)
	if neg {
		return "-" + out
	}
	return out
}
