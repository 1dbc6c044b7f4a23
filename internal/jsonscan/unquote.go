package jsonscan

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Unquote decodes the JSON string v, quotes included and no white space
// around it, exactly as encoding/json decodes it into a string: escapes
// decoded, each byte of invalid UTF-8 and each lone surrogate escape
// replaced by U+FFFD. It reports false for anything that is not one valid
// JSON string (null included, which encoding/json would skip), so that it
// can be called on a value nothing has checked.
//
// String gives the contents of a string without escapes for free; Unquote
// is for the texts that a caller must hand on decoded, such as a tool
// result's text, where one pass instead of encoding/json's two matters.
func Unquote(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	s := v[1 : len(v)-1]
	i := plainRun(s, 0)
	if i == len(s) {
		return string(s), true // the usual case: nothing to decode
	}
	// As long as s, which the text is at most unless it holds invalid
	// UTF-8: an escape is longer than what it stands for.
	b := append(make([]byte, 0, len(s)), s[:i]...)
	for {
		switch c := s[i]; {
		case c == '\\':
			var ok bool
			if b, i, ok = appendEscape(b, s, i); !ok {
				return "", false
			}
		case c == '"' || c < ' ':
			return "", false // the string ends early, or a raw control character
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
		j := plainRun(s, i)
		b = append(b, s[i:j]...)
		if i = j; i == len(s) {
			// b is not used again: the string may own its bytes, as
			// strings.Builder's does, rather than copy a text that may
			// be megabytes long a second time.
			return unsafe.String(unsafe.SliceData(b), len(b)), true
		}
	}
}

// appendEscape appends what the escape at s[i] stands for, and returns the
// index after it; false when it is not a valid escape.
func appendEscape(b, s []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(s) {
		return b, i, false
	}
	switch e := s[i+1]; e {
	case '"', '\\', '/':
		return append(b, e), i + 2, true
	case 'b':
		return append(b, '\b'), i + 2, true
	case 'f':
		return append(b, '\f'), i + 2, true
	case 'n':
		return append(b, '\n'), i + 2, true
	case 'r':
		return append(b, '\r'), i + 2, true
	case 't':
		return append(b, '\t'), i + 2, true
	case 'u':
		r := hex4(s, i)
		if r < 0 {
			return b, i, false
		}
		i += 6
		if utf16.IsSurrogate(r) {
			// A pair decodes to one rune; anything else leaves U+FFFD,
			// and what follows is read on its own, as encoding/json does.
			if dec := utf16.DecodeRune(r, hex4(s, i)); dec != utf8.RuneError {
				return utf8.AppendRune(b, dec), i + 6, true
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(b, r), i, true
	}
	return b, i, false
}

// hex4 decodes the escape \uXXXX at s[i], or returns -1.
func hex4(s []byte, i int) rune {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// plainRun returns the index of the first byte of s from i on that is not
// printable ASCII or is a quote or a backslash: the end of what Unquote
// copies as it is. Eight bytes at a time while there is none (as
// validString does; a false alarm only ends the fast loop early).
func plainRun(s []byte, i int) int {
	for i+8 <= len(s) {
		w := binary.LittleEndian.Uint64(s[i:])
		q, b := w^(lows*'"'), w^(lows*'\\')
		if (w|(w-lows*0x20)&^w|(q-lows)&^q|(b-lows)&^b)&highs != 0 {
			break
		}
		i += 8
	}
	for i < len(s) && s[i] >= ' ' && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
		i++
	}
	return i
}
