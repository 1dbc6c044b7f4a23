package lro

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcplro/lro/internal/recipes"
	"github.com/mcplro/lro/internal/records"
	"github.com/mcplro/lro/internal/tmpl"
)

// A Recipe is a jq program over the records of an offloaded file (the
// lines after the header). The descriptor shows it as a shell command; the
// lro_extract tool runs it in process with parameters bound as variables.
type Recipe struct {
	Description string
	// Filter is the jq program. It may refer to Params as $name.
	Filter string
	// Slurp runs Filter once over an array of all records (jq -s);
	// otherwise it runs once per record.
	Slurp bool
	// Raw prints strings without quotes (jq -r).
	Raw bool
	// Params are the variables Filter uses, with the defaults the shell
	// command shows.
	Params []RecipeParam

	command string // the shell command after the file path
}

// RecipeParam is a variable of a [Recipe].
type RecipeParam struct {
	Name string
	// Default is what the shell command shows and what lro_extract binds
	// when the caller gives no value. The memory recipes' are the
	// specification's: a real value ("_semantic") or, for what only the
	// caller knows (a search term, a tag), a placeholder, the parameter's
	// name in capitals ("KEYWORD", "TAG"). The recipes inferred for other
	// records take theirs from the records (the most common value of a
	// field, a word of a text field, a tag), so that each answers as
	// written; the placeholder remains where the records have none.
	Default string
}

// Recipes returns the recipes of memory descriptors at detail d, numbered
// from 1 in the order returned.
func (o *Offloader) Recipes(d Detail) []Recipe { return slices.Clone(o.templates.recipes[d]) }

// parseRecipes reads the blocks of a rendered recipes template.
func parseRecipes(text string) ([]Recipe, error) {
	var out []Recipe
	var cur *Recipe
	sc := bufio.NewScanner(strings.NewReader(text))
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want \"key: value\", got %q", lineNo, line)
		}
		value = strings.TrimSpace(value)
		if key != "recipe" && cur == nil {
			return nil, fmt.Errorf("line %d: %q before the first \"recipe:\"", lineNo, key)
		}
		switch key {
		case "recipe":
			out = append(out, Recipe{Description: value})
			cur = &out[len(out)-1]
		case "flags":
			for f := range strings.FieldsSeq(value) {
				switch f {
				case "-s":
					cur.Slurp = true
				case "-r":
					cur.Raw = true
				default:
					return nil, fmt.Errorf("line %d: unknown flag %q (want -r or -s)", lineNo, f)
				}
			}
		case "param":
			name, def, _ := strings.Cut(value, "=")
			if !recipes.IsIdent(name) {
				return nil, fmt.Errorf("line %d: bad parameter name %q", lineNo, name)
			}
			cur.Params = append(cur.Params, RecipeParam{Name: name, Default: def})
		case "filter":
			cur.Filter = value
		default:
			return nil, fmt.Errorf("line %d: unknown key %q", lineNo, key)
		}
	}
	for i := range out {
		if out[i].Filter == "" {
			return nil, fmt.Errorf("recipe %d (%s) has no filter", i+1, out[i].Description)
		}
		out[i].command = shellSuffix(out[i])
	}
	return out, nil
}

var varRE = regexp.MustCompile(`\$[A-Za-z_][A-Za-z0-9_]*`)

// ShellFilter returns r.Filter with each parameter replaced by the JSON
// literal of its default, which is also a jq literal: the form a shell
// user copies and edits.
func (r Recipe) ShellFilter() string {
	if len(r.Params) == 0 {
		return r.Filter
	}
	return varRE.ReplaceAllStringFunc(r.Filter, func(v string) string {
		for _, p := range r.Params {
			if p.Name == v[1:] {
				lit, _ := records.MarshalText(p.Default)
				return string(lit)
			}
		}
		return v
	})
}

// shellSuffix returns the part of the command after "tail -n +2 FILE".
func shellSuffix(r Recipe) string {
	var b strings.Builder
	b.WriteString(" | jq ")
	if r.Raw {
		b.WriteString("-r ")
	}
	if r.Slurp {
		b.WriteString("-s ")
	}
	b.WriteString(shellQuote(r.ShellFilter()))
	return b.String()
}

// shellRecipes renders recipes as commands over the file at path.
func shellRecipes(recipes []Recipe, path string) []JQRecipe {
	head := "tail -n +2 " + shellQuote(path)
	out := make([]JQRecipe, len(recipes))
	for i, r := range recipes {
		out[i] = JQRecipe{Description: r.shownDescription(), Command: head + r.command + recipeCut}
	}
	return out
}

// shownDescription is the description a descriptor shows: its
// parameters in capitals ("Search title for KEYWORD", "Filter by status =
// VALUE"), as the command spells a placeholder, rather than $keyword,
// which the command never shows; in lower case each is the name
// lro_extract's params take. A parameter with a default has it in the
// command instead. The inferred recipes write them $keyword, as jq binds
// them; a field's name, quoted when it is odd ("$value"), is left as it
// is.
func (r Recipe) shownDescription() string {
	if len(r.Params) == 0 {
		return r.Description
	}
	d := r.Description
	var b strings.Builder
	quoted := false
	for i := 0; i < len(d); i++ {
		switch c := d[i]; {
		case c == '\\' && quoted && i+1 < len(d):
			b.WriteString(d[i : i+2])
			i++
			continue
		case c == '"':
			quoted = !quoted
		case c == '$' && !quoted:
			if p, ok := r.paramAt(d[i+1:]); ok {
				b.WriteString(strings.ToUpper(p))
				i += len(p)
				continue
			}
		}
		b.WriteByte(d[i])
	}
	return b.String()
}

// paramAt returns the name of the parameter s starts with, if any: the
// longest, and only as a whole word.
func (r Recipe) paramAt(s string) (string, bool) {
	best := ""
	for _, p := range r.Params {
		if strings.HasPrefix(s, p.Name) && len(p.Name) > len(best) &&
			(len(s) == len(p.Name) || !isWordByte(s[len(p.Name)])) {
			best = p.Name
		}
	}
	return best, best != ""
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// recipeCut ends every recipe's shell command: run as written, a recipe
// prints at most 32 KiB, whatever the size of the file (a list of 20,000
// records printed megabytes into a model's context). The guidance says so,
// and how to see more.
const recipeCut = "|head -c32768"

// shellQuote quotes s for a POSIX shell. Words made only of characters no
// shell treats specially stay as they are, which keeps typical paths short.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// renderRecipes renders the recipes template at each detail level.
func renderRecipes(t *tmpl.Template) (map[Detail][]Recipe, error) {
	out := make(map[Detail][]Recipe, 3)
	for _, d := range []Detail{DetailLight, DetailMedium, DetailFull} {
		text, err := t.Render(tmpl.Fields{"Detail": string(d)})
		if err != nil {
			return nil, fmt.Errorf("lro: recipes template at %s detail: %w", d, err)
		}
		rs, err := parseRecipes(text)
		if err != nil {
			return nil, fmt.Errorf("lro: recipes template at %s detail: %w", d, err)
		}
		if len(rs) != RecipeCount {
			return nil, fmt.Errorf("lro: recipes template at %s detail: %d recipes, want %d", d, len(rs), RecipeCount)
		}
		out[d] = rs
	}
	return out, nil
}

// internalRecipes returns rs as internal/recipes and lro_extract hold them.
func internalRecipes(rs []Recipe) []recipes.Recipe {
	out := make([]recipes.Recipe, len(rs))
	for i, r := range rs {
		out[i] = recipes.Recipe{Description: r.Description, Filter: r.Filter, Slurp: r.Slurp, Raw: r.Raw}
		for _, p := range r.Params {
			out[i].Params = append(out[i].Params, recipes.RecipeParam(p))
		}
	}
	return out
}

// inferredRecipes returns the recipes internal/recipes inferred, with the
// shell command each descriptor shows.
func inferredRecipes(rs []recipes.Recipe) []Recipe {
	out := make([]Recipe, len(rs))
	for i, r := range rs {
		out[i] = Recipe{Description: r.Description, Filter: r.Filter, Slurp: r.Slurp, Raw: r.Raw}
		for _, p := range r.Params {
			out[i].Params = append(out[i].Params, RecipeParam(p))
		}
		out[i].command = shellSuffix(out[i])
	}
	return out
}
