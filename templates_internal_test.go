package lro

import (
	"reflect"
	"strings"
	"testing"
	"text/template"
	"time"
)

// goTemplate parses a built-in template with text/template, as lro did
// before internal/tmpl.
func goTemplate(t *testing.T, name string) *template.Template {
	t.Helper()
	text, err := readTemplate(nil, name)
	if err != nil {
		t.Fatal(err)
	}
	funcs := template.FuncMap{"duration": humanDuration, "bytes": humanBytes}
	return template.Must(template.New(name).Option("missingkey=error").Funcs(funcs).Parse(text))
}

// TestBuiltinTemplatesRenderAsTextTemplate renders the built-in templates
// over every combination of the guidance data's values, each zero and not,
// with text/template over the struct lro used to pass it and with
// internal/tmpl over the fields lro passes now: the bytes are the same.
func TestBuiltinTemplatesRenderAsTextTemplate(t *testing.T) {
	ts, err := loadTemplates(nil)
	if err != nil {
		t.Fatal(err)
	}
	recipes := goTemplate(t, RecipesTemplate)
	for _, d := range []Detail{DetailLight, DetailMedium, DetailFull} {
		var want strings.Builder
		if err := recipes.Execute(&want, struct{ Detail Detail }{d}); err != nil {
			t.Fatal(err)
		}
		rs, err := parseRecipes(want.String())
		if err != nil {
			t.Fatal(err)
		}
		if got := ts.recipes[d]; !reflect.DeepEqual(got, rs) {
			t.Errorf("recipes at %s: got %+v, want %+v", d, got, rs)
		}
	}
	shell, native := goTemplate(t, ShellGuidanceTemplate), goTemplate(t, NativeGuidanceTemplate)
	n := 0
	for _, detail := range []Detail{DetailLight, DetailMedium, DetailFull} {
		for _, count := range []int{0, 5} {
			for _, kind := range []struct{ memories, lines bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
				for _, section := range []string{"", "items"} {
					for _, sections := range []int{0, 1, 3} {
						for _, ttl := range []time.Duration{0, time.Hour, 90 * time.Minute, 500 * time.Millisecond} {
							for _, largest := range []int{0, 812, 1_400_000} {
								d := guidanceData{Count: count, Tokens: 7, Path: "/tmp/lro/a b.jsonl", Detail: detail,
									Memories: kind.memories, Lines: kind.lines, Section: section, Sections: sections,
									TTL: ttl, Largest: largest}
								for _, c := range []struct {
									native bool
									goT    *template.Template
								}{{false, shell}, {true, native}} {
									var want strings.Builder
									if err := c.goT.Execute(&want, d); err != nil {
										t.Fatal(err)
									}
									if got := ts.guidance(c.native, d); got != strings.TrimSpace(want.String()) {
										t.Fatalf("%+v native=%v:\n got %q\nwant %q", d, c.native, got, want.String())
									}
									n++
								}
							}
						}
					}
				}
			}
		}
	}
	if n != 3*2*4*2*3*4*3*2 {
		t.Fatalf("%d renderings", n)
	}
}
