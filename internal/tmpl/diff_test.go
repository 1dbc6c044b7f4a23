package tmpl

import (
	"fmt"
	"strings"
	"testing"
	"text/template"
	"time"
)

// testDuration and testBytes stand for lro's duration and bytes.
func testDuration(d time.Duration) string { return "D(" + d.String() + ")" }
func testBytes(n int) string              { return fmt.Sprintf("B(%d)", n) }

var testFuncs = map[string]Func{"duration": Unary(testDuration), "bytes": Unary(testBytes)}

// goRender renders text with text/template as lro did before this package.
func goRender(name, text string, data Fields) (string, error, error) {
	t, err := template.New(name).Option("missingkey=error").
		Funcs(template.FuncMap{"duration": testDuration, "bytes": testBytes}).Parse(text)
	if err != nil {
		return "", err, nil
	}
	var b strings.Builder
	err = t.Execute(&b, data)
	return b.String(), nil, err
}

// testData are data of every kind, zero and not.
var testData = []Fields{
	{"Count": 3, "Tokens": 0, "Path": "/tmp/a b", "Detail": "light", "Memories": true, "Lines": false, "Section": "",
		"Sections": 2, "TTL": time.Hour, "Largest": 0, "Ratio": 1.5, "Sub": Fields{"A": 1, "B": "", "Empty": Fields{}}},
	{"Count": 0, "Tokens": 5, "Path": "", "Detail": "full", "Memories": false, "Lines": true, "Section": "items",
		"Sections": 1, "TTL": time.Duration(0), "Largest": 1_400_000, "Ratio": 0.0, "Sub": Fields{"A": 0, "B": "b", "Empty": Fields{}}},
	{"Count": -1, "Tokens": 1, "Path": "x", "Detail": "medium", "Memories": true, "Lines": true, "Section": "s",
		"Sections": 0, "TTL": 90 * time.Minute, "Largest": 999, "Ratio": -2.0, "Sub": Fields{"A": 7, "B": "x", "Empty": Fields{}}},
}

// overrides use each construct of the subset, as a user's template would.
var overrides = map[string]string{
	"fields":    "{{.Count}} {{.Path}} {{.Detail}} {{.TTL}} {{.Memories}} {{.Ratio}} {{.Sub.A}} {{.Sub.Empty}}",
	"root":      "{{$.Count}} {{$.Sub.B}} {{with .Sub}}{{$.Count}}{{.A}}{{end}} {{$}}",
	"dot":       "{{.}}|{{with .Sub}}{{.}}{{end}}",
	"chain":     "{{(.Sub).A}} {{(.Sub).Empty}}",
	"if":        "{{if .Count}}c{{else if .Lines}}l{{else if .Path}}p{{else}}none{{end}}{{if .TTL}}t{{end}}{{if .Ratio}}r{{end}}{{if .Sub.Empty}}e{{end}}{{if .Sub}}s{{end}}",
	"with":      "{{with .Sub}}{{.A}}{{end}}{{with .Count}}{{.}}{{else}}none{{end}}{{with .Tokens}}t{{else with .Path}}{{.}}{{else}}-{{end}}",
	"not":       "{{not .Count}} {{not .Path}} {{not .TTL}} {{not .Sub.Empty}} {{not 0.0}} {{.Lines | not}}",
	"and-or":    `{{and .Count .Path}} {{or .Tokens .Path}} {{and 1 0 2}} {{or 0 "" .Sections}} {{.Count | and 1}} {{0 | or 0}}`,
	"and-short": `{{and .Tokens .Nope}} {{or .Count .Nope}}`,
	"and-late":  `{{and .Count .Nope}}`,
	"eq":        `{{eq .Count 3}} {{eq .TTL 3600000000000}} {{eq .Detail "light" "full"}} {{eq .Memories true}} {{eq .Ratio 1.5}} {{eq 'a' 97}} {{eq .Count .Sections .Largest}} {{3 | eq .Count}}`,
	"ne":        `{{ne .Count 3}} {{ne .Detail "light"}} {{ne .TTL 0}}`,
	"order":     `{{lt .Count 10}} {{le .Detail "m"}} {{gt .TTL 0}} {{ge .Ratio 2.0}} {{lt .Count .Sections}} {{le .TTL .TTL}} {{gt "b" "a"}} {{ge -1 .Count}}`,
	"len":       `{{len .Path}} {{len .Sub}} {{len "héllo"}} {{.Detail | len}}`,
	"printf":    `{{printf "%d|%5s|%v|%.2f|%T" .Count .Detail .TTL .Ratio .Count}} {{.Path | printf "%q"}} {{"x" | printf}} {{printf "%v" .Sub}}`,
	"print":     `{{print 1 "a" .Memories 2}} {{println .Count "z"}} {{print}} {{print .Sub.Empty}}`,
	"funcs":     `{{duration .TTL}} {{bytes .Count}} {{.TTL | duration}} {{bytes 1500}} {{duration 90}} {{bytes 'a'}} {{.Largest | bytes | printf "%s!"}} {{bytes (len .Path)}}`,
	"constants": `{{1}} {{1.5}} {{1e3}} {{0x10}} {{0x1p4}} {{'a'}} {{"s"}} {{true}} {{-2}} {{1_000}} {{0b101}} {{0o17}} {{"\t"}} {{print 1e3}}`,
	"trim":      "a  {{- /* c */ -}}  b {{- .Count -}}\n c {{/* kept */}} d {{- 1}}",
	"parens":    `{{if (and (eq .Count 3) (not .Lines))}}y{{end}} {{(len .Path)}} {{(print 1) | printf "%s"}}`,
	"identarg":  `{{printf "%s|" print}}{{eq (print) ""}}`,
	"pipes":     `{{.Count | printf "%d" | len | eq 1}}`,
	"trim-else": "x {{- if .Count -}}  a  {{- else if .Lines -}}  b  {{- else -}}  c  {{- end -}} y",
	"typed":     "{{duration 1e3}} {{bytes 1.0}} {{bytes 0x10}} {{bytes -1}} {{printf \"%d\" 1.0}}",
	"float-int": "{{1e3 | bytes}}",
	"chain-str": "{{(print 1).X}}",
	"len-root":  "{{len .}} {{len .Sub.Empty}} {{with $}}{{.Count}}{{end}}",
	"missing":   "{{.Nope}}",
	"nested":    "{{.Sub.Nope}}",
	"notafield": "{{.Count.X}}",
	"mixed-lt":  "{{lt .Count .Path}}",
	"mixed-eq":  "{{eq .Count .Ratio}}",
	"eq-map":    "{{eq .Sub .Sub}}",
	"eq-one":    "{{eq .Count}}",
	"lt-bool":   "{{lt true false}}",
	"len-int":   "{{len .Count}}",
	"bytes-dur": "{{bytes .TTL}}",
	"dur-int":   "{{duration .Count}}",
	"bytes-str": `{{bytes "x"}}`,
	"bytes-flt": "{{bytes 1.5}}",
	"pipe-fmt":  "{{1 | printf}}",
	"fmt-num":   "{{printf 1}}",
	"fmt-int":   "{{printf .Count}}",
	"overflow":  "{{18446744073709551615}}",
	// Lexing: trim markers, comments, quoting and spacing.
	"trim-space":   "a \n\t{{- 3 -}}\n\t b",
	"minus":        "{{-3}}|{{- 3}}|{{3 -}} x|{{ -3 }}|{{- -3 -}}|",
	"trim-crlf":    "a\r\n{{- .Count -}}\r\nb",
	"comment-trim": "a {{- /* x */}} b {{/* y */ -}} c{{/*z*/}}d{{- /* multi\nline */ -}} e",
	"strings":      `{{"a}}b"}} {{"\"q\" \\ \u00e9 \x41 {{"}} {{print "}}" "{{"}}`,
	"raw":          "{{`a\nb}}`}} {{`\\n`}} {{print `x` `\"`}}",
	"chars":        `{{'\n'}} {{'\''}} {{'\x41'}} {{'é'}} {{print '"'}}`,
	"numbers":      "{{-0}} {{+1}} {{.5}} {{1.}} {{0X1F}} {{-0x1E}} {{1E2}} {{0x1.8p1}} {{1_0.5}} {{'a' | printf \"%v\"}}",
	"spacing":      "{{  .Count  }}{{\n.Path\n}}{{ ( .Count ) }}{{\t.Sub.A\t|\tprint\t}}",
	"nested-paren": `{{print (print (print (len "ab")) 1) | len}} {{((.Sub)).A}} {{(((1)))}}`,
	"else-if":      "{{if eq .Count 0}}zero{{else if eq .Count 1}}one{{else if lt .Count 0}}neg{{else}}many{{end}}",
	"else-with":    "{{with .Tokens}}t{{.}}{{- else with .Path -}} p{{.}} {{- else with .Count}}c{{else}}-{{end}}",
	"call-chain":   "{{print.X}}",
	"root-chain":   "{{$.Sub.A}} {{with .Sub}}{{$.Path}}{{end}} {{($).Count}}",
	"trailing-|":   "{{.Count |}}{{.Path | }}{{print (1 |)}}",
}

// TestRenderMatchesTextTemplate renders each override over each data with
// text/template and this package: where text/template succeeds both print
// the same bytes, and where it fails so does Render.
func TestRenderMatchesTextTemplate(t *testing.T) {
	for name, text := range overrides {
		mine, err := Parse(name, text, testFuncs)
		if err != nil {
			t.Errorf("%s: Parse: %v", name, err)
			continue
		}
		for i, data := range testData {
			want, perr, eerr := goRender(name, text, data)
			if perr != nil {
				t.Fatalf("%s: text/template rejects the test's own template: %v", name, perr)
			}
			got, err := mine.Render(data)
			switch {
			case eerr != nil && err != nil:
			case eerr != nil:
				t.Errorf("%s over data %d: Render printed %q; text/template fails: %v", name, i, got, eerr)
			case err != nil:
				t.Errorf("%s over data %d: Render fails: %v; text/template printed %q", name, i, err, want)
			case got != want:
				t.Errorf("%s over data %d:\n got %q\nwant %q", name, i, got, want)
			}
		}
	}
}
