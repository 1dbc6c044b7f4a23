package tmpl

import (
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
		{"a\n{{block \"x\" .}}b{{end}}", `{{template "x"}}`},
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

// TestParseErrorsAreGos checks a syntax error reads as text/template's.
func TestParseErrorsAreGos(t *testing.T) {
	for _, text := range []string{"{{if .A}}", "{{.A", "{{end}}", "{{nope 1}}", "{{else}}", "{{/* x", "{{$x}}", "{{break}}"} {
		_, want := template.New("t.tmpl").Funcs(template.FuncMap{"duration": testDuration, "bytes": testBytes}).Parse(text)
		_, err := Parse("t.tmpl", text, testFuncs)
		if want == nil || err == nil || err.Error() != want.Error() {
			t.Errorf("%q: got %v, want %v", text, err, want)
		}
	}
}
