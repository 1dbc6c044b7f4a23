package lro

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcplro/lro/internal/jsonscan"
)

// inferSample is how many records inference reads. Fields that appear only
// after that many records are left out of the schema and the recipes, which
// then mention only what certainly exists.
const inferSample = 2000

// shape is what inference learned about generic records.
type shape struct {
	n      int               // records sampled
	kind   string            // JSON type of the records themselves
	fields map[string]*field // top-level fields, for object records
	order  []string          // field names in first-seen order
}

type field struct {
	name    string
	seen    int
	types   map[string]int // JSON type -> count
	strLen  int            // total length of string values
	values  map[string]int // distinct short string values, while few
	elemStr bool           // an array whose elements are strings
}

func jsonType(v []byte) string {
	if len(v) == 0 {
		return "null"
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if slices.ContainsFunc(v, func(c byte) bool { return c == '.' || c == 'e' || c == 'E' }) {
		return "number"
	}
	return "integer"
}

const maxDistinct = 50

func inferShape(records []json.RawMessage) *shape {
	s := &shape{fields: make(map[string]*field)}
	for _, r := range records[:min(len(records), inferSample)] {
		s.n++
		t := jsonType(r)
		if s.kind == "" {
			s.kind = t
		} else if s.kind != t {
			s.kind = "mixed"
		}
		if t != "object" {
			continue
		}
		_ = jsonscan.Fields(r, func(kv jsonscan.Field) bool {
			name := string(kv.Key)
			if strings.IndexByte(name, '\\') >= 0 {
				return true // escaped keys would need decoding; leave them out
			}
			f := s.fields[name]
			if f == nil {
				f = &field{name: name, types: map[string]int{}, values: map[string]int{}}
				s.fields[name] = f
				s.order = append(s.order, name)
			}
			f.seen++
			ft := jsonType(kv.Value)
			f.types[ft]++
			switch ft {
			case "string":
				f.strLen += len(kv.Value) - 2
				if f.values != nil {
					if str, ok := jsonscan.String(kv.Value); ok && len(str) <= 64 {
						f.values[string(str)]++
					}
					if len(f.values) > maxDistinct {
						f.values = nil
					}
				}
			case "array":
				if el, err := jsonscan.Elements(kv.Value); err == nil && len(el) > 0 && jsonType(el[0]) == "string" {
					f.elemStr = true
				}
			}
			return true
		})
	}
	return s
}

// only reports the single type f has, or "".
func (f *field) only() string {
	if len(f.types) == 1 {
		for t := range f.types {
			return t
		}
	}
	return ""
}

func (s *shape) schema() json.RawMessage {
	var b strings.Builder
	if s.kind != "object" {
		typ := s.kind
		if typ == "mixed" || typ == "" {
			return json.RawMessage(`{}`)
		}
		fmt.Fprintf(&b, `{"type":%q}`, typ)
		return json.RawMessage(b.String())
	}
	b.WriteString(`{"type":"object","properties":{`)
	for i, name := range s.order {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := marshalText(name)
		b.Write(key)
		f := s.fields[name]
		types := make([]string, 0, len(f.types))
		for t := range f.types {
			types = append(types, t)
		}
		slices.Sort(types)
		switch {
		case len(types) == 1 && types[0] == "array" && f.elemStr:
			b.WriteString(`:{"type":"array","items":{"type":"string"}}`)
		case len(types) == 1:
			fmt.Fprintf(&b, `:{"type":%q}`, types[0])
		default:
			t, _ := marshalText(types)
			fmt.Fprintf(&b, `:{"type":%s}`, t)
		}
	}
	b.WriteString(`}`)
	var req []string
	for _, name := range s.order {
		if s.fields[name].seen == s.n {
			req = append(req, name)
		}
	}
	if len(req) > 0 {
		r, _ := marshalText(req)
		fmt.Fprintf(&b, `,"required":%s`, r)
	}
	b.WriteString(`}`)
	return json.RawMessage(b.String())
}

// jqPath returns the jq path of a top-level field.
func jqPath(name string) string {
	if isIdent(name) {
		return "." + name
	}
	lit, _ := marshalText(name)
	return ".[" + string(lit) + "]"
}

// placeholder is the default of a parameter only the caller can fill (a
// search term, a tag): its name in capitals, as the memory recipes spell
// theirs (templates/recipes.tmpl). Parameters with a useful real default
// (the most common value of a field, a line range) keep it.
func placeholder(name string) string { return strings.ToUpper(name) }

// recipes returns up to ten recipes that use only fields every sampled
// record has with a single type, so each one runs on every line.
func (s *shape) recipes() []Recipe {
	out := []Recipe{
		{Description: "Show the first 10 records", Filter: ".[:10]", Slurp: true},
		{Description: "Count the records", Filter: "length", Slurp: true},
	}
	if s.kind != "object" {
		out = append(out, Recipe{Description: "Search records by keyword", Filter: `select(tostring | test($keyword; "i"))`,
			Params: []RecipeParam{{"keyword", placeholder("keyword")}}})
		return finish(out)
	}
	var scalars, texts, categories, numbers, tagLists []*field
	for _, name := range s.order {
		f := s.fields[name]
		if f.seen != s.n {
			continue
		}
		switch f.only() {
		case "string":
			scalars = append(scalars, f)
			if len(f.values) > 1 && len(f.values) <= max(2, s.n/2) {
				categories = append(categories, f)
			} else {
				texts = append(texts, f)
			}
		case "integer", "number":
			scalars = append(scalars, f)
			numbers = append(numbers, f)
		case "boolean":
			scalars = append(scalars, f)
		case "array":
			if f.elemStr {
				tagLists = append(tagLists, f)
			}
		}
	}
	if s.isLines() {
		return finish(append(out,
			Recipe{Description: "Search lines by keyword, with line numbers", Filter: `select(.text | test($keyword; "i")) | "\(.line): \(.text)"`,
				Raw: true, Params: []RecipeParam{{"keyword", placeholder("keyword")}}},
			Recipe{Description: "Print a range of lines", Filter: `select(.line >= ($from | tonumber) and .line <= ($to | tonumber)) | .text`,
				Raw: true, Params: []RecipeParam{{"from", "1"}, {"to", "50"}}},
		))
	}
	if len(scalars) > 1 {
		var keys []string
		for _, f := range scalars[:min(3, len(scalars))] {
			keys = append(keys, objectKey(f.name))
		}
		out = append(out, Recipe{Description: "Project the first fields: " + fieldList(scalars[:min(3, len(scalars))]),
			Filter: "{" + strings.Join(keys, ", ") + "}"})
	}
	// The longest strings are the ones worth searching.
	slices.SortStableFunc(texts, func(a, b *field) int { return cmp.Compare(b.strLen, a.strLen) })
	for _, f := range texts[:min(2, len(texts))] {
		out = append(out, Recipe{Description: "Search " + f.name + " by keyword",
			Filter: "select(" + jqPath(f.name) + ` | test($keyword; "i"))`, Params: []RecipeParam{{"keyword", placeholder("keyword")}}})
	}
	for _, f := range categories[:min(2, len(categories))] {
		p := jqPath(f.name)
		out = append(out,
			Recipe{Description: "Count by " + f.name, Slurp: true,
				Filter: "group_by(" + p + ") | map({" + objectKey(f.name) + ": .[0]" + p + ", count: length})"},
			Recipe{Description: "Filter by " + f.name, Filter: "select(" + p + " == $value)",
				Params: []RecipeParam{{"value", mostCommon(f.values)}}})
	}
	for _, f := range tagLists[:min(1, len(tagLists))] {
		out = append(out, Recipe{Description: "Filter by an element of " + f.name,
			Filter: "select(" + jqPath(f.name) + " | index($value))", Params: []RecipeParam{{"value", placeholder("value")}}})
	}
	for _, f := range numbers[:min(2, len(numbers))] {
		out = append(out, Recipe{Description: "Top 10 by " + f.name + ", highest first", Slurp: true,
			Filter: "sort_by(" + jqPath(f.name) + ") | reverse | .[:10]"})
	}
	return finish(out)
}

func (s *shape) isLines() bool {
	return len(s.order) == 2 && s.fields["line"] != nil && s.fields["text"] != nil &&
		s.fields["line"].only() == "integer" && s.fields["text"].only() == "string"
}

func objectKey(name string) string {
	if isIdent(name) {
		return name
	}
	lit, _ := marshalText(name)
	return string(lit) + ": " + jqPath(name)
}

func fieldList(fs []*field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

func mostCommon(values map[string]int) string {
	best, n := "", -1
	for v, c := range values {
		if c > n || c == n && v < best {
			best, n = v, c
		}
	}
	return best
}

func finish(rs []Recipe) []Recipe {
	rs = rs[:min(len(rs), RecipeCount)]
	for i := range rs {
		rs[i].command = shellSuffix(rs[i])
	}
	return rs
}
