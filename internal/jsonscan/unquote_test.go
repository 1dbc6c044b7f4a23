package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// unquoteSeeds are JSON strings, valid and not, for TestUnquote and
// FuzzUnquote.
var unquoteSeeds = []string{
	`""`, `"plain ascii text"`, `"é ü 😀"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\u00E9"`,
	`"\ud83d\ude00"`, `"\ud800"`, `"\ud800x"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `"\ud800\ud800\udc00"`,
	"\"bad \xff\xfe utf8\"", "\"\xed\xa0\x80\"", "\"\xef\xbf\xbd\"", "\"trunc \xe2\x82\"",
	`"{\"id\":\"m1\",\"content\":\"\\u003cb\\u003e\"}"`, `"` + strings.Repeat("long run ", 20) + `\n"`,
	`"\'"`, `"\x"`, `"\u12"`, `"\u12g4"`, `"abc\"`, `"a"b"`, "\"tab\there\"", "\"nl\n\"",
	`"`, `x`, `null`, `1`, ` "a"`, `"a" `, `"\`, `"\u"`,
}

func TestUnquote(t *testing.T) {
	for _, s := range unquoteSeeds {
		checkUnquote(t, []byte(s))
	}
	for s, want := range map[string]string{
		`"\u00e9\n"`:             "é\n",
		`"\ud83d\ude00"`:         "😀",
		`"\ud800x"`:              "\ufffdx",
		"\"a\xffb\"":             "a\ufffdb",
		`"` + "0123456789" + `"`: "0123456789",
	} {
		if got, ok := Unquote([]byte(s)); !ok || got != want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", s, got, ok, want)
		}
	}
}

// FuzzUnquote checks Unquote against encoding/json decoding into a string.
//
//	go test -run '^$' -fuzz FuzzUnquote -fuzztime 1m ./internal/jsonscan/
func FuzzUnquote(f *testing.F) {
	for _, s := range unquoteSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		checkUnquote(t, v)
	})
}

// checkUnquote checks that Unquote takes v exactly when encoding/json
// decodes it as a string token (with nothing around it), and decodes it
// the same way.
func checkUnquote(t *testing.T, v []byte) {
	t.Helper()
	got, ok := Unquote(v)
	var want string
	err := json.Unmarshal(v, &want)
	isString := err == nil && len(v) > 0 && v[0] == '"' && v[len(v)-1] == '"'
	switch {
	case ok != isString:
		t.Fatalf("Unquote(%q) ok = %v; encoding/json: %q, %v", v, ok, want, err)
	case ok && got != want:
		t.Fatalf("Unquote(%q) = %q; encoding/json: %q", v, got, want)
	}
}

func BenchmarkUnquote(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"plain", strings.Repeat("a plain line of text ", 500)},
		{"escaped", strings.Repeat(`{"id":"m1","content":"<cache> é"},`, 300)},
	} {
		v, _ := json.Marshal(bc.text)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(v)))
			for b.Loop() {
				if _, ok := Unquote(v); !ok {
					b.Fatal("not taken")
				}
			}
		})
	}
}
