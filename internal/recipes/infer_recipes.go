package recipes

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// A candidate is a recipe that may make the descriptor: the Count-2
type candidate struct {
	rank int
	Recipe
}

// Parameters show in descriptions as $name, where they are used ("Search
// title for $keyword"), so that a model learns them from the descriptor.
var rangeParams = []RecipeParam{{"from", "11"}, {"to", "20"}}

// keywordParam is the parameter of a search of w: a word of it (see
// words.go), or the placeholder when it has none.
func keywordParam(w *words) []RecipeParam {
	k := ""
	if w != nil {
		k = w.best()
	}
	if k == "" {
		k = placeholder("keyword")
	}
	return []RecipeParam{{"keyword", k}}
}

// anyWords returns the search term of a search of every field: the
// longest text's, else the first string field's, else one of any string.
func (s *Shape) anyWords() *words {
	if s.kind == "object" {
		if fs := s.classify(); len(fs.texts) > 0 && fs.texts[0].words.best() != "" {
			return &fs.texts[0].words
		}
		for _, name := range s.order {
			if f := s.fields[name]; f.words.best() != "" {
				return &f.words
			}
		}
	}
	return &s.any
}

// recipes returns exactly Count recipes: the first ten records, the
// count, then the most useful of the recipes the records' shape allows,
// topped up with recipes that run on records of any shape. Field recipes
// use only fields every sampled record has with a single type, so each
// one runs on every line.
func (s *Shape) Recipes() []Recipe {
	out := []Recipe{
		{Description: "Show the first 10 records", Filter: ".[:10]", Slurp: true},
		{Description: "Count the records", Filter: "length", Slurp: true},
	}
	var cs []candidate
	switch {
	case s.isLines():
		cs = lineRecipes(keywordParam(&s.fields["text"].words))
	case s.kind == "object":
		cs = s.objectRecipes()
	case s.kind == "string":
		cs = stringRecipes(keywordParam(&s.any))
	case numeric(s.kind):
		cs = numberRecipes()
	}
	cs = append(cs, s.fillers()...)
	// The lowest ranks, in the order proposed.
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(cs[a].rank, cs[b].rank) })
	idx = idx[:min(len(idx), Count-len(out))]
	slices.Sort(idx)
	for _, i := range idx {
		out = append(out, cs[i].Recipe)
	}
	return finish(out)
}

func (s *Shape) isLines() bool {
	return len(s.order) == 2 && s.fields["line"] != nil && s.fields["text"] != nil &&
		s.fields["line"].seen == s.n && s.fields["text"].seen == s.n &&
		s.fields["line"].only() == "integer" && s.fields["text"].only() == "string"
}

// numbered prints a {"line","text"} record as grep -n does.
const numbered = `"\(.line): \(.text)"`

func lineRecipes(keywordParam []RecipeParam) []candidate {
	search := `select(.text | test($keyword; "i"))`
	return []candidate{
		{1, Recipe{Description: "Search lines for $keyword", Filter: search + " | " + numbered, Raw: true, Params: keywordParam}},
		// The text's own lines, as sed -n and lro_extract's lines print
		// them: a blank line has no record, and comes back empty.
		{2, Recipe{Description: "Print lines $from to $to", Filter: `reduce .[] as $r ([]; .[$r.line] = $r.text) | .[($from | tonumber):($to | tonumber) + 1][] | . // ""`,
			Raw: true, Slurp: true, Params: []RecipeParam{{"from", "1"}, {"to", "50"}}}},
		{3, Recipe{Description: "Print the lines around line $line", Filter: `select(.line - ($line | tonumber) | fabs <= 5) | ` + numbered,
			Raw: true, Params: []RecipeParam{{"line", "10"}}}},
		{4, Recipe{Description: "Count lines matching $keyword", Filter: "map(" + search + ") | length", Slurp: true, Params: keywordParam}},
		{5, Recipe{Description: "Print lines without $keyword", Filter: `select(.text | test($keyword; "i") | not) | ` + numbered, Raw: true, Params: keywordParam}},
		{6, Recipe{Description: "Print the last 20 lines", Filter: ".[-20:][] | " + numbered, Raw: true, Slurp: true}},
		{7, Recipe{Description: "Print the 10 longest lines", Filter: "sort_by(.text | length) | reverse | .[:10][] | " + numbered, Raw: true, Slurp: true}},
		{8, Recipe{Description: "Show the 10 most repeated lines", Filter: "group_by(.text) | map({count: length, text: .[0].text}) | sort_by(.count) | reverse | .[:10]", Slurp: true}},
	}
}

func stringRecipes(keywordParam []RecipeParam) []candidate {
	search := `select(test($keyword; "i"))`
	return []candidate{
		{1, Recipe{Description: "Search records for $keyword", Filter: search, Params: keywordParam}},
		{2, Recipe{Description: "Count records matching $keyword", Filter: "map(" + search + ") | length", Slurp: true, Params: keywordParam}},
		{3, Recipe{Description: "Show records without $keyword", Filter: `select(test($keyword; "i") | not)`, Params: keywordParam}},
		{4, mostCommonValues},
		{5, Recipe{Description: "Count distinct values", Filter: "unique | length", Slurp: true}},
		{6, Recipe{Description: "Show the 10 longest records", Filter: "sort_by(length) | reverse | .[:10]", Slurp: true}},
	}
}

var mostCommonValues = Recipe{Description: "Show the 10 most common values", Slurp: true,
	Filter: "group_by(.) | map({value: .[0], count: length}) | sort_by(.count) | reverse | .[:10]"}

func numberRecipes() []candidate {
	return []candidate{
		{1, Recipe{Description: "Min, max and mean", Filter: "{min: min, max: max, mean: (add / length)}", Slurp: true}},
		{2, Recipe{Description: "Show the 10 highest", Filter: "sort | reverse | .[:10]", Slurp: true}},
		{3, Recipe{Description: "Show the 10 lowest", Filter: "sort | .[:10]", Slurp: true}},
		{4, mostCommonValues},
		{5, Recipe{Description: "Count distinct values", Filter: "unique | length", Slurp: true}},
	}
}

// fields sorts the fields every sampled record has with one type.
type fields struct {
	all        []*field // in record order
	texts      []*field // strings worth a keyword search, longest first
	categories []*field // strings, integers, booleans of few values
	numbers    []*field
	tagLists   []*field // arrays of strings
	key        *field   // values that each find one record
}

// maxRecipeName is the longest field name a recipe is written on: ten
// recipes naming fields of 128 bytes twice each took 3 KB of a
// descriptor. lro_extract and the records still have every field.
const maxRecipeName = 40

func (s *Shape) classify() fields {
	var fs fields
	var keys []*field
	for _, name := range s.order {
		f := s.fields[name]
		if f.seen != s.n || len(f.name) > maxRecipeName {
			continue // a long name would fill the descriptor's recipes
		}
		fs.all = append(fs.all, f)
		d := len(f.values)
		switch t := f.only(); {
		case f.values != nil && d == 1:
			// One value everywhere says nothing record by record.
		case (t == "string" || t == "boolean") && f.values != nil && d <= max(2, s.n/2),
			t == "integer" && f.values != nil && d <= min(20, max(2, s.n/4)):
			fs.categories = append(fs.categories, f)
		case t == "string":
			if f.distinct != nil && s.n > 1 && f.strLen <= 40*s.n {
				keys = append(keys, f)
			} else {
				fs.texts = append(fs.texts, f)
			}
		case t == "integer" && f.distinct != nil && s.n > 1 && idName(f.name):
			keys = append(keys, f)
		case numeric(t):
			fs.numbers = append(fs.numbers, f)
		case t == "array" && f.elemStr:
			fs.tagLists = append(fs.tagLists, f)
		}
	}
	// An id names itself; otherwise the first key will do. Numbers are keys
	// only when so named: others are often measures that happen to differ.
	// The keys left are text to search, or numbers.
	if len(keys) > 0 {
		fs.key = keys[0]
		if i := slices.IndexFunc(keys, func(f *field) bool { return strings.EqualFold(f.name, "id") }); i >= 0 {
			fs.key = keys[i]
		} else if i := slices.IndexFunc(keys, func(f *field) bool { return idName(f.name) }); i >= 0 {
			fs.key = keys[i]
		}
		for _, f := range keys {
			switch {
			case f == fs.key:
			case f.only() == "string":
				fs.texts = append(fs.texts, f)
			default:
				fs.numbers = append(fs.numbers, f)
			}
		}
	}
	// The longest strings are the ones worth searching.
	slices.SortStableFunc(fs.texts, func(a, b *field) int { return cmp.Compare(b.strLen, a.strLen) })
	return fs
}

// idName reports whether a field is named as an identifier: id, key, uuid,
// user_id, user-key, userId, userID.
func idName(name string) bool {
	n := strings.ToLower(name)
	if n == "id" || n == "key" || n == "uuid" {
		return true
	}
	for _, suffix := range []string{"_id", "-id", "_key", "-key", "_uuid"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	for _, suffix := range []string{"Id", "ID", "Key"} {
		if rest, ok := strings.CutSuffix(name, suffix); ok && rest != "" && !unicode.IsUpper(rune(rest[len(rest)-1])) {
			return true
		}
	}
	return false
}

func (s *Shape) objectRecipes() []candidate {
	fs := s.classify()
	var cs []candidate
	add := func(rank int, r Recipe) { cs = append(cs, candidate{rank, r}) }

	// A projection to the first short fields, unless that is all of them;
	// one field alone is shown as its values.
	var proj []*field
	for _, f := range fs.all {
		if t := f.only(); len(proj) < 3 && (t == "string" && f.strLen <= maxValueLen*s.n || numeric(t) || t == "boolean") {
			proj = append(proj, f)
		}
	}
	if len(proj) == 0 && len(fs.all) > 0 {
		proj = fs.all[:1]
	}
	switch {
	case len(proj) == 1:
		add(1, Recipe{Description: "Show only " + display(proj[0].name), Filter: JQPath(proj[0].name)})
	case len(proj) > 1 && len(proj) < len(s.order):
		keys := make([]string, len(proj))
		names := make([]string, len(proj))
		for i, f := range proj {
			keys[i], names[i] = ObjectKey(f.name), display(f.name)
		}
		add(1, Recipe{Description: "Show only " + strings.Join(names, ", "), Filter: "{" + strings.Join(keys, ", ") + "}"})
	}
	for i, f := range fs.texts[:min(2, len(fs.texts))] {
		add([]int{2, 8}[i], Recipe{Description: "Search " + display(f.name) + " for $keyword",
			Filter: "select(" + JQPath(f.name) + ` | test($keyword; "i"))`, Params: keywordParam(&f.words)})
	}
	if f := fs.key; f != nil {
		add(7, filterBy(f, f.first))
	}
	for i, f := range fs.categories[:min(2, len(fs.categories))] {
		key := JQKey(f.name)
		if f.name == "count" {
			key = "value"
		}
		add([]int{3, 10}[i], Recipe{Description: "Count by " + display(f.name), Slurp: true,
			Filter: "group_by(" + JQPath(f.name) + ") | map({" + key + ": .[0]" + JQIndex(f.name) + ", count: length})"})
		add([]int{4, 11}[i], filterBy(f, mostCommon(f.values)))
	}
	for _, f := range fs.tagLists[:min(1, len(fs.tagLists))] {
		value := f.elem
		if value == "" {
			value = placeholder("value")
		}
		add(5, Recipe{Description: "Show records with $value in " + display(f.name),
			Filter: "select(" + JQPath(f.name) + " | index($value))", Params: []RecipeParam{{"value", value}}})
	}
	for i, f := range fs.numbers[:min(2, len(fs.numbers))] {
		add([]int{6, 13}[i], Recipe{Description: "Top 10 by " + display(f.name) + ", highest first", Slurp: true,
			Filter: "sort_by(" + JQPath(f.name) + ") | reverse | .[:10]"})
		if i == 0 {
			add(12, Recipe{Description: "Min, max and mean of " + display(f.name), Slurp: true,
				Filter: "map(" + JQPath(f.name) + ") | {min: min, max: max, mean: (add / length)}"})
		}
	}
	if len(fs.texts) > 0 {
		f := fs.texts[0]
		add(14, Recipe{Description: "Show the record with the longest " + display(f.name), Slurp: true,
			Filter: "max_by(" + JQPath(f.name) + " | length)"})
	}
	return cs
}

// filterBy selects the records whose field f has a value, by default def.
// Numbers and booleans compare as text, so that "200" and 200 both work.
func filterBy(f *field, def string) Recipe {
	r := Recipe{Description: "Filter by " + display(f.name) + " = $value", Params: []RecipeParam{{"value", def}}}
	if f.only() == "string" {
		r.Filter = "select(" + JQPath(f.name) + " == $value)"
	} else {
		r.Filter = "select(" + JQPath(f.name) + " | tostring == ($value | tostring))"
	}
	return r
}

// fillers are recipes that run on records of any shape. They rank after
// the recipes of a shape, except where the shape has none better.
func (s *Shape) fillers() []candidate {
	var optional []string // fields some records lack, most common first
	for _, name := range s.order {
		if f := s.fields[name]; f.seen < s.n && len(name) <= maxRecipeName {
			optional = append(optional, name)
		}
	}
	slices.SortStableFunc(optional, func(a, b string) int { return cmp.Compare(s.fields[b].seen, s.fields[a].seen) })
	// The rank of each filler, by the kind of records: objects, strings
	// or numbers, and anything else (mixed, or no records at all).
	col := 2
	switch {
	case s.kind == "object":
		col = 0
	case s.kind == "string" || numeric(s.kind):
		col = 1
	}
	search := `select(any(.. | scalars; tostring | test($keyword; "i")))`
	kw := keywordParam(s.anyWords())
	things := "records"
	if s.kind == "object" {
		things = "all fields"
	}
	var cs []candidate
	add := func(ranks [3]int, r Recipe) { cs = append(cs, candidate{ranks[col], r}) }
	fieldRanks := [3]int{105, 110, 3}
	if len(optional) > 0 {
		fieldRanks[0] = 9
	}
	add([3]int{110, 110, 1}, Recipe{Description: "Count records by JSON type", Filter: "group_by(type) | map({type: .[0] | type, count: length})", Slurp: true})
	add([3]int{9, 107, 2}, Recipe{Description: "Search " + things + " for $keyword", Filter: search, Params: kw})
	add(fieldRanks, Recipe{Description: "Count records per field", Filter: "[.[] | objects | keys[]] | group_by(.) | map({field: .[0], count: length})", Slurp: true})
	if s.kind == "object" && len(optional) > 0 {
		add([3]int{9, 9, 9}, Recipe{Description: "Show records that have field $field", Filter: "select(has($field))",
			Params: []RecipeParam{{"field", optional[0]}}})
	}
	add([3]int{101, 101, 4}, Recipe{Description: "Show the last 10 records", Filter: ".[-10:]", Slurp: true})
	add([3]int{102, 102, 5}, Recipe{Description: "Show records $from to $to", Filter: ".[($from | tonumber) - 1:($to | tonumber)]", Slurp: true, Params: rangeParams})
	add([3]int{103, 103, 6}, Recipe{Description: "Sample 10 records evenly", Filter: ". as $r | [range(0; length; length / 10 | floor + 1) | $r[.]]", Slurp: true})
	add([3]int{104, 108, 7}, Recipe{Description: "Count records matching $keyword", Filter: "map(" + search + ") | length", Slurp: true, Params: kw})
	add([3]int{106, 104, 8}, Recipe{Description: "Show the 10 largest records", Filter: "sort_by(tostring | length) | reverse | .[:10]", Slurp: true})
	add([3]int{107, 109, 9}, Recipe{Description: "Count distinct records", Filter: "unique | length", Slurp: true})
	return cs
}

func mostCommon(values map[string]*int) string {
	best, n := "", -1
	for v, c := range values {
		if *c > n || *c == n && v < best {
			best, n = v, *c
		}
	}
	return best
}

func finish(rs []Recipe) []Recipe {
	rs = rs[:min(len(rs), Count)]
	return rs
}
