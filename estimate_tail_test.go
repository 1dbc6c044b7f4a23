package lro

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// quarterTokensByRune is quarterTokens read a rune at a time: the
// definition the word-at-a-time scan must keep to.
func quarterTokensByRune(p []byte) int {
	q := 0
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		if r < utf8.RuneSelf {
			q++
		} else {
			q += runeWeight(r)
		}
		p = p[size:]
	}
	return q
}

// TestQuarterTokensTail puts a rune of each weight, and invalid UTF-8, at
// every offset of ASCII texts of every length up to 80 bytes: the last
// eight bytes of a text are read in one load that overlaps the words
// before them, and must count each byte once.
func TestQuarterTokensTail(t *testing.T) {
	for n := 0; n <= 80; n++ {
		base := strings.Repeat("abcdefg", 12)[:n]
		for _, r := range []string{"é", "ж", "東", "🙂", "\xff", "\xe6\x9d"} {
			for i := 0; i <= n; i++ {
				p := []byte(base[:i] + r + base[i:])
				if got, want := quarterTokens(p), quarterTokensByRune(p); got != want {
					t.Fatalf("%q: %d quarter tokens, want %d", p, got, want)
				}
			}
		}
		if got := quarterTokens([]byte(base)); got != n {
			t.Fatalf("%d ASCII bytes: %d quarter tokens", n, got)
		}
	}
}
