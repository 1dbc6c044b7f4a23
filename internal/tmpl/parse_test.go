package tmpl

import (
	"fmt"
	"strings"
	"testing"
	"text/template"
)

// TestParseRejectsWhatRenderDoesNotRun checks that each construct outside
// the subset fails Parse with an error naming the template, the line and
// the construct, and listing what is supported.
func TestParseRejectsWhatRenderDoesNotRun(t *testing.T) {
	for _, c := range []struct{ text, construct string }{
		{"a\n{{range .Items}}{{.}}{{end}}", "{{range}}"},
		{"a\n{{template \"x\"}}", `{{template "x"}}`},
		{"a\n{{block \"x\" .}}b{{end}}", `{{block "x"}}`},
		{"a\n{{define \"x\"}}b{{end}}", `{{define "x"}}`},
		{"\n{{define \"t.tmpl\"}}b{{end}}", `{{define "t.tmpl"}}`},
		{"a\n{{$x := .Count}}", "variable $x"},
		{"a\n{{if $x := .Count}}{{end}}", "variable $x"},
		{"a\n{{print ($x := 1)}}", "variable $x"},
		{"a\n{{print nil}}", "nil"},
		{"a\n{{print 1i}}", "complex number 1i"},
		{"a\n{{html .Path}}", "function html"},
		{"a\n{{index .Sub \"A\"}}", "function index"},
		{"a\n{{call .F}}", "function call"},
		{"a\n{{.Path | urlquery}}", "function urlquery"},
		{"a\n{{print (slice .Path 1)}}", "function slice"},
		{"a\n{{js.X}}", "function js"},
		{"a\n{{.TTL.Round 1}}", "giving arguments to .TTL.Round"},
		{"a\n{{1 | .Count}}", "giving arguments to .Count"},
		{"a\n{{not}}", "wrong number of args for not: want 1 got 0"},
		{"a\n{{lt 1 2 3}}", "wrong number of args for lt: want 2 got 3"},
		{"a\n{{1 | bytes 2}}", "wrong number of args for bytes: want 1 got 2"},
		{"a\n{{print 1 | printf}}", ""}, // accepted: the format comes from the pipe
	} {
		_, err := Parse("t.tmpl", c.text, testFuncs)
		if c.construct == "" {
			if err != nil {
				t.Errorf("%q: %v", c.text, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: Parse accepted it", c.text)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "t.tmpl:2:") || !strings.Contains(msg, c.construct) {
			t.Errorf("%q: the error does not name t.tmpl:2: and %s: %v", c.text, c.construct, err)
		}
		if !strings.Contains(msg, "wrong number") && !strings.Contains(msg, "supported: lro runs a subset") ||
			!strings.Contains(msg, "printf") && !strings.Contains(msg, "wrong number") {
			t.Errorf("%q: the error does not say what is supported: %v", c.text, err)
		}
	}
}

// TestParseRejectsWhatTextTemplateRejects checks that a syntax error
// text/template rejects Parse rejects too, with an error naming the
// template, the line and what is wrong.
func TestParseRejectsWhatTextTemplateRejects(t *testing.T) {
	for _, c := range []struct {
		text string
		line int
		want string
	}{
		{"{{if .A}}", 1, "{{if}} at t.tmpl:1:2 has no {{end}}"},
		{"a\n{{with .A}}x{{else}}y", 2, "{{with}} at t.tmpl:2:2 has no {{end}}"},
		{"a\n\n{{.A", 3, "unclosed action"},
		{"a\n{{.A\n", 2, "unclosed action"},
		{"{{end}}", 1, "unexpected {{end}}"},
		{"a\n{{else}}", 2, "unexpected {{else}}"},
		{"{{if 1}}{{else}}{{else}}{{end}}", 1, "unexpected {{else}} after {{else}}"},
		{"{{if 1}}{{else with 1}}{{end}}", 1, "unexpected {{else with}} in {{if}}"},
		{"{{with 1}}{{else if 1}}{{end}}", 1, "unexpected {{else if}} in {{with}}"},
		{"{{end 1}}", 1, `unexpected "1" in {{end}}`},
		{"{{nope 1}}", 1, `function "nope" not defined`},
		{"a\n{{/* x", 2, "unclosed comment"},
		{"{{/* x */-}}", 1, "comment ends before closing delimiter"},
		{"{{-/* x */}}", 1, `illegal number syntax: "-"`},
		{"{{- -}}", 1, `illegal number syntax: "-"`},
		{"{{}}", 1, "missing value for action"},
		{"{{if}}{{end}}", 1, "missing value for {{if}}"},
		{"{{print ()}}", 1, "missing value for parenthesized pipeline"},
		{"{{print (1}}", 1, "unclosed left paren"},
		{"{{print 1)}}", 1, "unexpected right paren"},
		{"{{print(1)}}", 1, `unexpected "(" in operand`},
		{"{{print 1\"a\"}}", 1, `unexpected "\"a\"" in operand`},
		{"{{.A | 1}}", 1, "giving arguments to 1"},
		{"{{..A}}", 1, "unexpected .A after ."},
		{"{{\"s\".A}}", 1, `unexpected .A after "s"`},
		{"{{.A,}}", 1, `unexpected "," in operand`},
		{"{{.A-}}", 1, "bad character U+002D '-'"},
		{"{{1x}}", 1, `bad number syntax: "1x"`},
		{"{{99999999999999999999}}", 1, "integer overflow"},
		{"{{1e400}}", 1, "illegal number syntax"},
		{"{{'ab'}}", 1, "malformed character constant"},
		{"{{print \"a\n\"}}", 1, "unterminated quoted string"},
		{"a\n{{print `a}}", 2, "unterminated raw quoted string"},
		{"{{print 'a}}", 1, "unterminated character constant"},
		{"{{print \"\\q\"}}", 1, "invalid string"},
		{"{{print 1:2}}", 1, "expected :="},
		{"{{print é}}", 1, `function "é" not defined`},
		{"{{print ☺}}", 1, "unrecognized character in action: U+263A"},
		{"{{if .A}}{{print}}", 1, "has no {{end}}"},
		{"{{$x}}", 1, "variable $x"},
		{"{{break}}", 1, "{{break}} is not supported"},
		{"{{print if}}", 1, "unexpected {{if}} in operand"},
	} {
		_, want := template.New("t.tmpl").Funcs(template.FuncMap{"duration": testDuration, "bytes": testBytes}).Parse(c.text)
		if want == nil {
			t.Errorf("%q: text/template accepts it", c.text)
		}
		_, err := Parse("t.tmpl", c.text, testFuncs)
		if err == nil {
			t.Errorf("%q: Parse accepts it; text/template: %v", c.text, want)
			continue
		}
		if loc := fmt.Sprintf("template: t.tmpl:%d:", c.line); !strings.HasPrefix(err.Error(), loc) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s...%s", c.text, err, loc, c.want)
		}
	}
}

// TestParenDepthAsTextTemplate checks Parse nests parentheses as deep as
// text/template's parser and no deeper.
func TestParenDepthAsTextTemplate(t *testing.T) {
	for _, depth := range []int{10000, 10001} {
		text := "{{" + strings.Repeat("(", depth) + "1" + strings.Repeat(")", depth) + "}}"
		_, want := template.New("t").Parse(text)
		_, err := Parse("t", text, nil)
		if (err == nil) != (want == nil) || (depth > 10000) != (err != nil) {
			t.Errorf("%d parentheses: got %v, text/template %v", depth, err, want)
		}
	}
}

// Output is bounded: 2,000 actions {{printf "%999999d" 1}} made lro.New
// allocate 2.5 GiB. A width over MaxOutput fails before it is formatted,
// output past MaxOutput fails at the action that wrote it, and so does a
// value over it; each error names the template.
func TestOutputBounded(t *testing.T) {
	for name, text := range map[string]string{
		"a wide printf":          `{{printf "%999999d" 1}}`,
		"a star width":           `{{printf "%*d" 1000000000 1}}`,
		"many actions":           strings.Repeat(`{{printf "%60000d" 1}}`, 2000),
		"much text and actions":  strings.Repeat(`{{"`+strings.Repeat("t", 1000)+`"}}`, 100),
		"values over the output": `{{printf "%s%s%s%s%s%s%s%s" ` + strings.Repeat(`"`+strings.Repeat("v", 9000)+`" `, 8) + `}}`,
	} {
		t.Run(name, func(t *testing.T) {
			tt, err := Parse("big.tmpl", text, nil)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			out, err := tt.Render(Fields{})
			if err == nil {
				t.Fatalf("rendered %d bytes, over MaxOutput (%d), with no error", len(out), MaxOutput)
			}
			if !strings.Contains(err.Error(), "big.tmpl") {
				t.Errorf("the error does not name the template: %v", err)
			}
		})
	}
	tt, err := Parse("ok.tmpl", `{{printf "%60000d" 1}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tt.Render(Fields{}); err != nil || len(out) != 60000 {
		t.Errorf("a template within MaxOutput: %d bytes, %v", len(out), err)
	}
}
