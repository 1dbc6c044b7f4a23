package recipes

import (
	"slices"
	"strings"
	"unicode"

	"github.com/mcplro/lro/internal/records"
)

// JQKeywords are the words jq 1.6, jq 1.7 and gojq reserve. jq 1.6 rejects
// some of them as the shorthand {if}; all of them are quoted, .["if"], so
// that no version has to be asked.
var JQKeywords = []string{
	"__loc__", "and", "as", "catch", "def", "elif", "else", "end", "false", "foreach", "if",
	"import", "include", "label", "not", "null", "or", "reduce", "then", "true", "try",
}

// plainName reports whether a field name can be written .name and {name}.
func plainName(name string) bool { return isIdent(name) && !slices.Contains(JQKeywords, name) }

// jqString returns name as a jq string literal. '$' is escaped, so that
// lro.Recipe.ShellFilter never mistakes part of a name for a parameter.
func jqString(name string) string {
	lit, _ := records.MarshalText(name)
	return strings.ReplaceAll(string(lit), "$", `\u0024`)
}

// JQIndex returns what follows an expression to take its field name:
// .name, or ["name"] (jq 1.6 rejects .[0].["name"]).
func JQIndex(name string) string {
	if plainName(name) {
		return "." + name
	}
	return "[" + jqString(name) + "]"
}

// JQPath returns the jq path of a top-level field.
func JQPath(name string) string {
	if plainName(name) {
		return "." + name
	}
	return "." + JQIndex(name)
}

// JQKey returns name as the key of an object construction.
func JQKey(name string) string {
	if plainName(name) {
		return name
	}
	return jqString(name)
}

// ObjectKey returns the member of an object construction that copies a
// field: {name} or {"odd name": .["odd name"]}.
func ObjectKey(name string) string {
	if plainName(name) {
		return name
	}
	return JQKey(name) + ": " + JQPath(name)
}

// display returns a field name as descriptions show it: as it is, or
// quoted when it could be misread (empty, with a '$' that looks like a
// parameter, a comma that looks like a list, control characters).
func display(name string) string {
	if name == "" || strings.ContainsAny(name, "$,\"") || strings.ContainsFunc(name, unicode.IsControl) || strings.TrimSpace(name) != name {
		lit, _ := records.MarshalText(name)
		return string(lit)
	}
	return name
}

// placeholder is the default of a parameter only the caller can fill (a
// search term, a tag) when the records offer no value for it (see
// words.go): its name in capitals, as the memory recipes spell theirs
// (templates/recipes.tmpl).
func placeholder(name string) string { return strings.ToUpper(name) }
