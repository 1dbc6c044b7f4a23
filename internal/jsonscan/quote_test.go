package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendQuoted: AppendQuoted and QuotedLen agree with encoding/json
// without HTML escaping, which lines of text were quoted with before.
func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", "<a & b>", "tab\there\r\n", "\x00\x1f\x7f", "\u2028\u2029", "\xff\xc0 bad", `"quoted" \ back`, "é ü 漢字 🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		got := AppendQuoted([]byte("x"), []byte(s))
		if string(got[1:]) != string(want) {
			t.Fatalf("%q: AppendQuoted gives %s, encoding/json %s", s, got[1:], want)
		}
		if n := QuotedLen([]byte(s)); n != len(want) {
			t.Fatalf("%q: QuotedLen %d, want %d", s, n, len(want))
		}
	})
}
