package tmpl

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzTemplate checks, for any template text, that what text/template
// rejects Parse rejects too, and that what Render prints text/template
// prints too, over every test data.
func FuzzTemplate(f *testing.F) {
	for _, text := range overrides {
		f.Add(text)
	}
	builtin, _ := filepath.Glob("../../templates/*.tmpl")
	for _, p := range builtin {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, text string) {
		mine, err := Parse("f", text, testFuncs)
		if _, perr, _ := goRender("f", text, nil); perr != nil {
			if err == nil {
				t.Fatalf("%q: text/template rejects it (%v); Parse accepts it", text, perr)
			}
			return
		}
		if err != nil {
			return // outside the subset
		}
		for i, data := range testData {
			got, err := mine.Render(data)
			if err != nil {
				continue
			}
			want, _, eerr := goRender("f", text, data)
			if eerr != nil || got != want {
				t.Fatalf("%q over data %d: Render printed %q; text/template printed %q (%v)", text, i, got, want, eerr)
			}
		}
	})
}
