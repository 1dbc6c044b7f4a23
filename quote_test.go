package lro

import (
	"testing"
)

// FuzzAppendQuoted: appendQuoted and quotedLen agree with marshalText,
// which lines of text were quoted with before.
func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", "<a & b>", "tab\there\r\n", "\x00\x1f\x7f", "\u2028\u2029", "\xff\xc0 bad", `"quoted" \ back`, "é ü 漢字 🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := marshalText(s)
		if err != nil {
			t.Fatal(err)
		}
		got := appendQuoted([]byte("x"), []byte(s))
		if string(got[1:]) != string(want) {
			t.Fatalf("%q: appendQuoted gives %s, marshalText %s", s, got[1:], want)
		}
		if n := quotedLen([]byte(s)); n != len(want) {
			t.Fatalf("%q: quotedLen %d, want %d", s, n, len(want))
		}
	})
}
