package lro

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/mcplro/lro/internal/records"
	"github.com/mcplro/lro/internal/tmpl"
)

//go:embed templates/*.tmpl
var builtinTemplates embed.FS

// builtinSchemas are the line schemas of memories at each detail level.
// Each names every field of its level, and says no more than is true of
// every MIF memory; it gives types as far as the descriptor's budget of
// 700 tokens allows (descriptor_budget_test.go). Light and medium type
// every field; full names its seventeen fields and types only those a
// query depends on and the name does not tell: memory_type's values, tags
// (an array) and provenance.confidence (a number, that recipe 9 sorts by).
//
//go:embed schemas/*.json
var builtinSchemas embed.FS

// Template file names, as looked up in the FS given to [WithTemplates].
const (
	RecipesTemplate        = "recipes.tmpl"
	ShellGuidanceTemplate  = "guidance_shell.tmpl"
	NativeGuidanceTemplate = "guidance_native.tmpl"
)

// guidanceData is what the guidance templates see.
type guidanceData struct {
	Count    int
	Tokens   int
	Path     string
	Detail   Detail
	Memories bool // records are MIF memories, not generic records
	Lines    bool // records are the lines of a text
	// Section is the field of the result the file holds ("" when the
	// result was the records), and Sections how many other large fields
	// the descriptor's sections list.
	Section  string
	Sections int
	// TTL is how long after it was written the file is deleted; zero
	// leaves the sentence out. Templates print it with {{duration .TTL}}.
	TTL time.Duration
	// Largest is the size in bytes of the largest record when it is over
	// the threshold (a recipe that prints records whole prints it, cut),
	// else zero. Templates print it with {{bytes .Largest}}.
	Largest int
}

// fields returns d as the guidance templates read it. Detail goes as a
// string, which tmpl knows (it prints and compares as the Detail did
// under text/template); the differential test in
// templates_internal_test.go holds the output to text/template's.
func (d guidanceData) fields() tmpl.Fields {
	return tmpl.Fields{
		"Count": d.Count, "Tokens": d.Tokens, "Path": d.Path, "Detail": string(d.Detail),
		"Memories": d.Memories, "Lines": d.Lines, "Section": d.Section, "Sections": d.Sections,
		"TTL": d.TTL, "Largest": d.Largest,
	}
}

// templateFuncs are the functions the templates may call.
var templateFuncs = map[string]tmpl.Func{"duration": tmpl.Unary(humanDuration), "bytes": tmpl.Unary(humanBytes)}

// humanBytes writes n for a model to read: "812 bytes", "14 KB", "1.4 MB".
func humanBytes(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1000_000:
		return fmt.Sprintf("%d KB", n/1000)
	case n < 10_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%d MB", n/1000_000)
}

// humanDuration writes d for a model to read: "1 hour", "90 minutes",
// "1 day 12 hours", at most its two largest units, rounded down.
func humanDuration(d time.Duration) string {
	if d < time.Second {
		return d.String()
	}
	units := []struct {
		size time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}}
	// 90 minutes reads better than 1 hour 30 minutes, and 36 hours than a
	// day and a half: a unit is used only when it divides d evenly or d
	// is at least two of it.
	var parts []string
	for _, u := range units {
		n := d / u.size
		if n == 0 || len(parts) == 0 && n < 2 && d%u.size != 0 {
			continue
		}
		name := u.name
		if n != 1 {
			name += "s"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, name))
		d -= n * u.size
		if len(parts) == 2 || d == 0 {
			break
		}
	}
	return strings.Join(parts, " ")
}

type templates struct {
	recipes map[Detail][]Recipe
	shell   *tmpl.Template
	native  *tmpl.Template
	schemas map[Detail]json.RawMessage
}

func loadTemplates(override fs.FS) (*templates, error) {
	parse := func(name string) (*tmpl.Template, error) {
		text, err := readTemplate(override, name)
		if err != nil {
			return nil, err
		}
		t, err := tmpl.Parse(name, text, templateFuncs)
		if err != nil {
			return nil, fmt.Errorf("lro: template %s: %w", name, err)
		}
		return t, nil
	}
	t := &templates{schemas: make(map[Detail]json.RawMessage)}
	rt, err := parse(RecipesTemplate)
	if err != nil {
		return nil, err
	}
	if t.recipes, err = renderRecipes(rt); err != nil {
		return nil, err
	}
	if t.shell, err = parse(ShellGuidanceTemplate); err != nil {
		return nil, err
	}
	if t.native, err = parse(NativeGuidanceTemplate); err != nil {
		return nil, err
	}
	// Render once now, so that a broken override fails New, not a tool call.
	for _, tt := range []*tmpl.Template{t.shell, t.native} {
		if _, err := tt.Render(guidanceData{Detail: DetailLight, Memories: true, TTL: time.Hour}.fields()); err != nil {
			return nil, fmt.Errorf("lro: template %s: %w", tt.Name(), err)
		}
	}
	for _, d := range []Detail{DetailLight, DetailMedium, DetailFull} {
		raw, err := builtinSchemas.ReadFile("schemas/" + string(d) + ".json")
		if err != nil {
			return nil, err
		}
		if t.schemas[d], err = records.CompactJSON(raw); err != nil {
			return nil, fmt.Errorf("lro: schema %s: %w", d, err)
		}
	}
	return t, nil
}

func readTemplate(override fs.FS, name string) (string, error) {
	if override != nil {
		b, err := fs.ReadFile(override, name)
		if err == nil {
			return string(b), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("lro: reading template %s: %w", name, err)
		}
	}
	b, err := builtinTemplates.ReadFile("templates/" + name)
	return string(b), err
}

// guidance renders the guidance text. Rendering was tried in loadTemplates,
// so a failure here can only come from data the template did not expect;
// the spec's wording is then better than nothing.
func (t *templates) guidance(native bool, d guidanceData) string {
	tt := t.shell
	if native {
		tt = t.native
	}
	out, err := tt.Render(d.fields())
	if err != nil {
		text := fmt.Sprintf("Results offloaded to JSONL (%d records, ~%d tokens saved).\nFile: %s\nDetail level: %s", d.Count, d.Tokens, d.Path, d.Detail)
		if d.TTL > 0 {
			text += "\nThe file is deleted about " + humanDuration(d.TTL) + " after it was written."
		}
		return text
	}
	return strings.TrimSpace(out)
}
