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
	for _, text := range lexingSeeds {
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

// lexingSeeds are texts at the edges of the lexer, most of them rejected.
var lexingSeeds = []string{
	"{{-3}}", "{{- 3}}", "{{-  3}}", "{{-\n3 -}}", "{{3-}}", "{{3 -}}", "{{3\t-}}", "{{3  -}}", "{{3 - }}",
	"a {{- /* c */ -}} b", "a {{-/* c */}} b", "a {{/* c */-}} b", "{{/* c */ }}", "{{ /* c */}}", "{{/* a */ b */}}",
	"{{/*}}*/}}", "{{/* x", "{{/**/}}{{- /**/ -}}",
	`{{"a\"}}"}}`, `{{"a\`, "{{\"a\nb\"}}", "{{`a\nb`}}", "{{`a", "{{'}}'}}", "{{'\\''}}", "{{''}}", "{{'ab'}}",
	"{{((1))}}", "{{(1}}", "{{1)}}", "{{(print 1).X}}", "{{print (1)(2)}}", "{{print(1)}}",
	"{{if 1}}a{{else if 0}}b{{else if 1}}c{{else}}d{{end}}", "{{if 1}}{{else}}{{else}}{{end}}", "{{if 1}}{{else if}}{{end}}",
	"{{with 1}}{{else with 0}}{{end}}", "{{with 1}}{{else if 0}}{{end}}", "{{if 1}}", "{{if 1}}{{else}}", "{{end}}",
	"{{.", "{{.A", "{{$", "{{", "}}", "{{}}", "{{ }}", "{{.A |}}", "{{| .A}}", "{{.A||.B}}", "{{.A.}}", "{{..A}}",
	"{{1.X}}", "{{0x}}", "{{0x1p}}", "{{1e}}", "{{1__0}}", "{{0b2}}", "{{1i}}", "{{1+2i}}", "{{+}}", "{{.5.5}}",
	"{{$x := 1}}", "{{$ := 1}}", "{{.A = 1}}", "{{nil}}", "{{print nil}}", "{{range .A}}{{end}}", "{{break}}",
	"{{é}}", "{{.é}}", "{{print \xff}}", "\xff{{1}}\xff", "{{print ☺}}",
}
