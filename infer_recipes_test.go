package lro

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/mcplro/lro/internal/recipes"
	"github.com/mcplro/lro/internal/records"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A recordSet is records of one shape, with parameter values other than
// the recipes' defaults that give answers worth checking.
type recordSet struct {
	name    string
	records []json.RawMessage
	keyword string // matches some records, not all
	tag     string // an element of the string-array field
	field   string // a field some records lack
	nothing bool   // there is nothing to find
}

// obj returns a JSON object with its members in the order given, as name,
// value pairs.
func obj(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := records.MarshalText(kv[i].(string))
		v, err := records.MarshalText(kv[i+1])
		if err != nil {
			panic(err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func values(vs ...any) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		out[i], _ = records.MarshalText(v)
	}
	return out
}

var words = []string{"alpha", "bravo", "timeout", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo"}

func sentence(i, n int) string {
	var w []string
	for j := range n {
		w = append(w, words[(i*7+j*3)%len(words)])
	}
	return strings.Join(w, " ")
}

func recordSets() []recordSet {
	var sets []recordSet
	add := func(s recordSet, n int, rec func(i int) json.RawMessage) {
		for i := range n {
			s.records = append(s.records, rec(i))
		}
		sets = append(sets, s)
	}
	add(recordSet{name: "tickets", keyword: "timeout", tag: "api"}, 120, func(i int) json.RawMessage {
		return obj("id", fmt.Sprintf("T-%04d", i), "title", fmt.Sprintf("Ticket %d: %s", i, sentence(i, 3)),
			"state", []string{"open", "closed", "pending"}[i%3], "priority", i%4+1,
			"labels", []string{"bug", []string{"ui", "api", "db"}[i%3], fmt.Sprint("l", i%5)}[:1+i%3],
			"hours", float64(i%17)*0.25+0.5, "done", i%5 == 0, "body", sentence(i, 12))
	})
	add(recordSet{name: "audit", keyword: "bucket 3$"}, 600, func(i int) json.RawMessage { return auditRecords(i + 1)[i] })
	add(recordSet{name: "jq keywords", keyword: "timeout", tag: "x2"}, 80, func(i int) json.RawMessage {
		return obj("if", []string{"then", "else", "end"}[i%3], "and", fmt.Sprintf("k-%03d", i), "__loc__", i*7%100,
			"then", sentence(i, 10), "reduce", []string{"x1", fmt.Sprint("x", i%4)}, "not", i%2 == 0,
			"def", sentence(i+3, 4), "elif", []string{"a", "b"}[i%2], "as", float64(i)/4, "try", i%3,
			"catch", "c", "label", fmt.Sprintf("%s %d", words[i%len(words)], i), "import", nil, "include", []int{i}, "foreach", map[string]any{"k": i},
			"or", i%5, "else", "e", "end", i, "true", i%2, "null", "n")
	})
	add(recordSet{name: "jq keywords, every kind of recipe", keyword: "echo", tag: "t2"}, 40, func(i int) json.RawMessage {
		return obj("label", fmt.Sprintf("k-%03d", i), "try", sentence(i, 8), "catch", []string{"p", "q"}[i%2],
			"foreach", float64(i*13%40)+0.5, "import", []string{"t1", "t2"}[:1+i%2], "include", []string{"u", "v", "w"}[i%3], "or", i)
	})
	add(recordSet{name: "odd names", keyword: "golf", tag: "b"}, 80, func(i int) json.RawMessage {
		return obj("a.b", fmt.Sprintf("id.%d", i), "count", []string{"one", "two", "three"}[i%3], "$value", []string{"v1", "v2"}[i%2],
			`q"uote`, fmt.Sprintf("%d %s", i, sentence(i, 9)), "", float64(i%9)/2, "it's", []string{"a", "b", "c"}[i%3:],
			"back\\slash", fmt.Sprintf("%s %d %s", words[i%len(words)], i, sentence(i, 8)), `\(x)`, i*3%50, "1st", i%3 == 0)
	})
	add(recordSet{name: "odd names 2", keyword: "kilo"}, 60, func(i int) json.RawMessage {
		return obj("new\nline", []string{"m", "n"}[i%2], "a b", []string{"p q", "r s", "t u"}[i%3], "x-y", fmt.Sprintf("%d %s", i, sentence(i, 12)), "$keyword", fmt.Sprintf("%d %s", i, sentence(i+5, 14)),
			"\\(y)", i*7%60, " ça ", fmt.Sprint("ç", i, words[i%len(words)]), "9lives", sentence(i, 2))
	})
	add(recordSet{name: "numbers and booleans to count by", keyword: "juliet"}, 90, func(i int) json.RawMessage {
		return obj("status", []int{200, 404, 500}[i%3], "ok", i%4 != 0, "msg", sentence(i, 15)+fmt.Sprint(" ", i))
	})
	add(recordSet{name: "measurements", keyword: "s2"}, 50, func(i int) json.RawMessage {
		return obj("sensor", fmt.Sprint("s", i%3), "temp", 20+float64(i*7%13)/4, "humidity", i*11%97)
	})
	add(recordSet{name: "integer key", keyword: "bravo"}, 50, func(i int) json.RawMessage {
		return obj("word", words[i%4], "ticketId", 1000+i*3)
	})
	add(recordSet{name: "empty objects", keyword: "x", nothing: true}, 30, func(int) json.RawMessage { return obj() })
	add(recordSet{name: "single field, unique", keyword: "bravo"}, 60, func(i int) json.RawMessage {
		return obj("name", fmt.Sprintf("%s %d", words[i%len(words)], i))
	})
	add(recordSet{name: "single field, categorical", keyword: "WARN"}, 60, func(i int) json.RawMessage {
		return obj("level", []string{"INFO", "WARN", "ERROR"}[i*i%3])
	})
	add(recordSet{name: "single field, text", keyword: "hotel"}, 30, func(i int) json.RawMessage {
		return obj("text", sentence(i, 20))
	})
	add(recordSet{name: "strings", keyword: "echo"}, 100, func(i int) json.RawMessage {
		return values(sentence(i, 1+i%4))[0]
	})
	add(recordSet{name: "numbers", keyword: "7"}, 100, func(i int) json.RawMessage {
		if i%3 == 0 {
			return values(float64(i%23) / 8)[0]
		}
		return values(i * 37 % 101)[0]
	})
	add(recordSet{name: "mixed", keyword: "golf", field: "b"}, 60, func(i int) json.RawMessage {
		return []json.RawMessage{values(sentence(i, 2))[0], values(i)[0], obj("a", i, "b", sentence(i, 2)), values([]any{i, "x"})[0],
			values(i%2 == 0)[0], json.RawMessage("null"), obj("c", words[i%4])}[i%7]
	})
	add(recordSet{name: "text lines", keyword: "disk"}, 300, func(i int) json.RawMessage {
		text := fmt.Sprintf("2026-11-22T06:%02d:%02dZ worker-%d processed batch %d", i/60, i%60, i%4, i)
		if i%7 == 3 {
			text = "ERROR disk full"
		}
		// Every tenth line is blank: it has no record.
		return obj("line", i+1+i/9, "text", text)
	})
	add(recordSet{name: "no common field", keyword: "delta", field: "c"}, 60, func(i int) json.RawMessage {
		switch i % 4 {
		case 0:
			return obj("a", i, "b", sentence(i, 3))
		case 1:
			return obj("b", sentence(i, 2), "c", i%2 == 0)
		case 2:
			return obj("c", i%3 == 0, "d", []string{"x"})
		}
		return obj("a", i)
	})
	add(recordSet{name: "nested only", keyword: "india", field: "extra"}, 40, func(i int) json.RawMessage {
		kv := []any{"meta", map[string]any{"n": i}, "items", []any{map[string]any{"w": words[i%len(words)]}}}
		if i%5 == 0 {
			kv = append(kv, "extra", nil)
		}
		if i%3 == 0 {
			kv = append(kv, "more", []int{i})
		}
		return obj(kv...)
	})
	add(recordSet{name: "no records", keyword: "x", nothing: true}, 0, nil)
	return sets
}

// TestInferredRecipes offloads record sets of every shape and checks that
// each has exactly RecipeCount recipes, that each recipe names its
// parameters, and that each gives the right answer, computed here from the
// records, both as the descriptor's shell command run by jq 1.6 and through
// lro_extract (gojq), with the default parameters and with others.
func TestInferredRecipes(t *testing.T) {
	_, err := exec.LookPath("jq")
	haveJQ := err == nil
	if !haveJQ {
		t.Log("no jq binary: the shell commands are not run, only lro_extract")
	}
	for _, set := range recordSets() {
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.OutputDir = t.TempDir()
			cfg.ThresholdTokens = 1 << 20 // lro_extract shows everything
			o, err := New(cfg, WithoutJanitor())
			require.NoError(t, err)
			defer o.Close()
			out, err := o.Offload(context.Background(), ResultSet{Operation: "tool", Generic: true, Records: set.records, Tokens: 1 << 21})
			require.NoError(t, err)
			require.Equal(t, Offloaded, out.Action)
			path := out.Response.FilePath

			recipes := inferredRecipes(recipes.Infer(set.records).Recipes())
			require.Len(t, recipes, RecipeCount)
			require.Len(t, out.Response.JQRecipes, RecipeCount)
			fromFile, err := recipesOf(o, filepath.Base(path), OffloadHeader{SchemaVersion: GenericSchemaVersion})
			require.NoError(t, err)
			require.Equal(t, internalRecipes(recipes), fromFile, "lro_extract infers the recipes the descriptor shows")
			assert.Equal(t, "Show the first 10 records", recipes[0].Description)
			assert.Equal(t, "Count the records", recipes[1].Description)

			recs := decodeAll(t, set.records)
			seen := map[string]bool{}
			for i, r := range recipes {
				assert.False(t, seen[r.Description], "two recipes say %q", r.Description)
				seen[r.Description] = true
				assert.Equal(t, JQRecipe{Description: r.shownDescription(), Command: "tail -n +2 " + shellQuote(path) + r.command + recipeCut}, out.Response.JQRecipes[i])
				outside := regexp.MustCompile(`"(\\.|[^"\\])*"`).ReplaceAllString(out.Response.JQRecipes[i].Description, "") // a field's odd name is its own
				assert.NotContains(t, outside, "$", "a descriptor spells parameters as its commands do")
				for _, p := range r.Params {
					assert.Contains(t, r.Description, "$"+p.Name, "the description names each parameter")
					assert.Contains(t, out.Response.JQRecipes[i].Description, strings.ToUpper(p.Name), "in capitals, as a placeholder")
					if strings.EqualFold(p.Default, p.Name) {
						assert.Equal(t, strings.ToUpper(p.Name), p.Default)
					}
				}
				t.Logf("%2d %-45s %s", i+1, r.Description, r.command)

				runs := []map[string]any{nil}
				if len(r.Params) > 0 {
					runs = append(runs, otherParams(t, set, recs, r))
				}
				for _, params := range runs {
					// The shell command shows each value as a string, as
					// jq's tostring writes it.
					bound := map[string]string{}
					shell := r
					shell.Params = slices.Clone(r.Params)
					for j, p := range shell.Params {
						if v, ok := params[p.Name]; ok {
							shell.Params[j].Default = jqString1(v)
						}
						bound[p.Name] = shell.Params[j].Default
					}
					command := out.Response.JQRecipes[i].Command // exactly as a model reads it
					if params != nil {
						command = "tail -n +2 " + shellQuote(path) + shellSuffix(shell)
					}
					args := map[string]any{"file_path": path, "recipe": float64(i + 1)}
					if params != nil {
						args["params"] = params
					}
					text, err := o.Extract(context.Background(), args)
					require.NoError(t, err, "recipe %d (%s) with %v", i+1, r.Description, params)
					got := extractOutput(t, text)
					if haveJQ {
						assert.Equal(t, shellOutput(t, command, r.Raw), got, "jq 1.6 and lro_extract agree: %s", command)
					}
					// Every recipe answers as written: its defaults are
					// found in the records (issue 39).
					checkAnswer(t, set, recs, r, bound, true, got)
				}
			}
		})
	}
}

// otherParams returns values for r's parameters that are not the defaults
// and that match something, typed as a caller of lro_extract may send
// them: numbers for line numbers, the field's own type for its values.
func otherParams(t *testing.T, set recordSet, recs []decodedRecord, r Recipe) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, p := range r.Params {
		switch p.Name {
		case "keyword":
			out[p.Name] = set.keyword
			if strings.EqualFold(set.keyword, p.Default) {
				out[p.Name] = strings.ToUpper(set.keyword) // another spelling, the same matches
			}
		case "from", "to", "line":
			out[p.Name] = map[string]float64{"from": 3, "to": 7, "line": 4}[p.Name]
		case "field":
			require.NotEmpty(t, set.field, "the set needs a field some records lack")
			out[p.Name] = set.field
		case "value":
			if m := filterRE.FindStringSubmatch(r.Description); m != nil {
				for _, rec := range recs {
					if v := rec.v.(map[string]any)[undisplay(m[1])]; jqString1(v) != p.Default {
						out[p.Name] = v
						break
					}
				}
			} else {
				require.NotEmpty(t, set.tag, "the set needs a tag")
				out[p.Name] = set.tag
			}
		default:
			t.Fatalf("recipe %q: no other value for $%s", r.Description, p.Name)
		}
		require.NotEqual(t, p.Default, jqString1(out[p.Name]), "$%s", p.Name)
	}
	return out
}

type decodedRecord struct {
	raw json.RawMessage
	v   any
}

func decodeAll(t *testing.T, raws []json.RawMessage) []decodedRecord {
	out := make([]decodedRecord, len(raws))
	for i, r := range raws {
		out[i].raw = r
		require.NoError(t, json.Unmarshal(r, &out[i].v))
	}
	return out
}

// shellOutput runs command with bash and jq, and returns its output: each
// JSON value compact, keys in jq's order, or the lines of -r.
func shellOutput(t *testing.T, command string, raw bool) []string {
	t.Helper()
	out := RunCut(t, command)
	if raw {
		return lines(string(out))
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	vals := []string{}
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		var b bytes.Buffer
		require.NoError(t, json.Compact(&b, v))
		vals = append(vals, b.String())
	}
	return vals
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return []string{}
	}
	return strings.Split(s, "\n")
}

// extractOutput returns the results lro_extract printed, without its notes.
func extractOutput(t *testing.T, text string) []string {
	t.Helper()
	out := []string{}
	for _, l := range lines(text) {
		if strings.HasPrefix(l, "[lro_extract:") {
			require.Equal(t, "[lro_extract: no results]", l, "nothing is left out")
			continue
		}
		out = append(out, l)
	}
	return out
}

var (
	searchRE = regexp.MustCompile(`^Search (.+) for \$keyword$`)
	filterRE = regexp.MustCompile(`^Filter by (.+) = \$value$`)
	countRE  = regexp.MustCompile(`^Count by (.+)$`)
	tagRE    = regexp.MustCompile(`^Show records with \$value in (.+)$`)
	topRE    = regexp.MustCompile(`^Top 10 by (.+), highest first$`)
	statsRE  = regexp.MustCompile(`^Min, max and mean(?: of (.+))?$`)
	longRE   = regexp.MustCompile(`^Show the record with the longest (.+)$`)
	onlyRE   = regexp.MustCompile(`^Show only (.+)$`)
)

func undisplay(name string) string {
	if strings.HasPrefix(name, `"`) {
		var s string
		if err := json.Unmarshal([]byte(name), &s); err != nil {
			panic(err)
		}
		return s
	}
	return name
}

// checkAnswer compares what a recipe printed with the answer computed from
// the records. nonEmpty asks for an answer that is not empty.
func checkAnswer(t *testing.T, set recordSet, recs []decodedRecord, r Recipe, params map[string]string, nonEmpty bool, got []string) {
	t.Helper()
	var want []any // JSON results
	var wantLines []string
	kw := regexp.MustCompile("(?i)" + params["keyword"])
	num := func(name string) int {
		n, err := strconv.Atoi(params[name])
		require.NoError(t, err)
		return n
	}
	field := func(rec decodedRecord, name string) any { return rec.v.(map[string]any)[name] }
	d := r.Description
	var m []string
	matches := func(re *regexp.Regexp) bool { m = re.FindStringSubmatch(d); return m != nil }
	switch {
	case d == "Show the first 10 records":
		want = []any{vals(recs[:min(10, len(recs))])}
	case d == "Count the records":
		want = []any{float64(len(recs))}
	case d == "Show the last 10 records":
		want = []any{vals(recs[max(0, len(recs)-10):])}
	case d == "Show records $from to $to":
		from, to := num("from")-1, min(num("to"), len(recs))
		want = []any{vals(recs[min(from, to):to])}
	case d == "Sample 10 records evenly":
		var sample []any
		for i := 0; i < len(recs); i += len(recs)/10 + 1 {
			sample = append(sample, recs[i].v)
		}
		want = []any{orEmpty(sample)}
	case (d == "Search records for $keyword" || d == "Search all fields for $keyword"):
		want = where(recs, func(rec decodedRecord) bool { return matchScalars(kw, rec.v) })
	case d == "Count records matching $keyword":
		want = []any{float64(len(where(recs, func(rec decodedRecord) bool { return matchScalars(kw, rec.v) })))}
	case d == "Show records without $keyword":
		want = where(recs, func(rec decodedRecord) bool { return !kw.MatchString(rec.v.(string)) })
	case d == "Count records by JSON type":
		want = []any{groupCount(recs, "type", func(rec decodedRecord) any { return jqType(rec.v) })}
	case d == "Count records per field":
		var keys []decodedRecord
		for _, rec := range recs {
			if m, ok := rec.v.(map[string]any); ok {
				for _, k := range sortedKeys(m) {
					keys = append(keys, decodedRecord{v: k})
				}
			}
		}
		want = []any{groupCount(keys, "field", func(rec decodedRecord) any { return rec.v })}
	case d == "Show records that have field $field":
		want = where(recs, func(rec decodedRecord) bool {
			m, _ := rec.v.(map[string]any)
			_, ok := m[params["field"]]
			return ok
		})
	case d == "Show the 10 largest records":
		// tostring is the compact record, or a string itself.
		want = []any{top10(recs, func(rec decodedRecord) any {
			if s, ok := rec.v.(string); ok {
				return float64(utf8.RuneCountInString(s))
			}
			return float64(utf8.RuneCount(rec.raw))
		}, true)}
	case d == "Count distinct records" || d == "Count distinct values":
		distinct := map[string]bool{}
		for _, rec := range recs {
			b, _ := json.Marshal(rec.v) // keys sorted
			distinct[string(b)] = true
		}
		want = []any{float64(len(distinct))}
	case d == "Show the 10 most common values":
		counts := groupCount(recs, "value", func(rec decodedRecord) any { return rec.v })
		want = []any{top10(asRecords(counts), func(rec decodedRecord) any { return rec.v.(map[string]any)["count"] }, true)}
	case d == "Show the 10 longest records":
		want = []any{top10(recs, func(rec decodedRecord) any { return float64(utf8.RuneCountInString(rec.v.(string))) }, true)}
	case d == "Show the 10 highest" || d == "Show the 10 lowest":
		want = []any{top10(recs, func(rec decodedRecord) any { return rec.v }, d == "Show the 10 highest")}
	case d == "Search lines for $keyword":
		wantLines = numberedLines(recs, func(l textLine) bool { return kw.MatchString(l.text) })
	case d == "Print lines without $keyword":
		wantLines = numberedLines(recs, func(l textLine) bool { return !kw.MatchString(l.text) })
	case d == "Count lines matching $keyword":
		want = []any{float64(len(numberedLines(recs, func(l textLine) bool { return kw.MatchString(l.text) })))}
	case d == "Print lines $from to $to":
		// As sed -n prints the text: blank lines too, up to its last.
		text := map[int]string{}
		last := 0
		for _, r := range recs {
			m := r.v.(map[string]any)
			n := int(m["line"].(float64))
			text[n], last = m["text"].(string), n
		}
		for n := num("from"); n <= min(num("to"), last); n++ {
			wantLines = append(wantLines, text[n])
		}
	case d == "Print the lines around line $line":
		wantLines = numberedLines(recs, func(l textLine) bool { return l.line >= num("line")-5 && l.line <= num("line")+5 })
	case d == "Print the last 20 lines":
		wantLines = numberedLines(recs[max(0, len(recs)-20):], func(textLine) bool { return true })
	case d == "Print the 10 longest lines":
		for _, v := range top10(recs, func(rec decodedRecord) any { return float64(utf8.RuneCountInString(field(rec, "text").(string))) }, true) {
			m := v.(map[string]any)
			wantLines = append(wantLines, fmt.Sprintf("%v: %v", m["line"], m["text"]))
		}
	case d == "Show the 10 most repeated lines":
		counts := groupCount(recs, "text", func(rec decodedRecord) any { return field(rec, "text") })
		want = []any{top10(asRecords(counts), func(rec decodedRecord) any { return rec.v.(map[string]any)["count"] }, true)}
	case matches(onlyRE):
		names := strings.Split(m[1], ", ")
		for _, rec := range recs {
			if len(names) == 1 {
				want = append(want, field(rec, undisplay(names[0])))
				continue
			}
			p := map[string]any{}
			for _, n := range names {
				p[undisplay(n)] = field(rec, undisplay(n))
			}
			want = append(want, p)
		}
	case matches(searchRE):
		name := undisplay(m[1])
		want = where(recs, func(rec decodedRecord) bool { return kw.MatchString(field(rec, name).(string)) })
	case matches(filterRE):
		name := undisplay(m[1])
		want = where(recs, func(rec decodedRecord) bool { return jqString1(field(rec, name)) == params["value"] })
		nonEmpty = true // the default is a real value
	case matches(countRE):
		name := undisplay(m[1])
		key := name
		if name == "count" {
			key = "value"
		}
		want = []any{groupCount(recs, key, func(rec decodedRecord) any { return field(rec, name) })}
	case matches(tagRE):
		name := undisplay(m[1])
		want = where(recs, func(rec decodedRecord) bool { return slices.Contains(field(rec, name).([]any), any(params["value"])) })
	case matches(topRE):
		name := undisplay(m[1])
		want = []any{top10(recs, func(rec decodedRecord) any { return field(rec, name) }, true)}
	case matches(statsRE):
		var xs []float64
		for _, rec := range recs {
			if m[1] == "" {
				xs = append(xs, rec.v.(float64))
			} else {
				xs = append(xs, field(rec, undisplay(m[1])).(float64))
			}
		}
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		want = []any{map[string]any{"min": slices.Min(xs), "max": slices.Max(xs), "mean": sum / float64(len(xs))}}
	case matches(longRE):
		name := undisplay(m[1])
		best := -1
		for i, rec := range recs {
			if best < 0 || utf8.RuneCountInString(field(rec, name).(string)) >= utf8.RuneCountInString(field(recs[best], name).(string)) {
				best = i
			}
		}
		want = []any{recs[best].v}
	default:
		t.Errorf("recipe %q: no answer to check it against", d)
		return
	}
	nonEmpty = nonEmpty && !set.nothing
	if wantLines != nil || r.Raw {
		if nonEmpty {
			assert.NotEmpty(t, wantLines, "%s: the test's parameters find something", d)
		}
		assert.Equal(t, orEmptyStrings(wantLines), got, "%s with %v", d, params)
		return
	}
	if nonEmpty {
		assert.NotEmpty(t, want, "%s: the test's parameters find something", d)
	}
	gotValues := []any{}
	for _, g := range got {
		var v any
		require.NoError(t, json.Unmarshal([]byte(g), &v), g)
		gotValues = append(gotValues, v)
	}
	assert.Equal(t, orEmpty(want), gotValues, "%s with %v", d, params)
}

func vals(recs []decodedRecord) []any {
	out := []any{}
	for _, r := range recs {
		out = append(out, r.v)
	}
	return out
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

func orEmptyStrings(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func asRecords(vs []any) []decodedRecord {
	out := make([]decodedRecord, len(vs))
	for i, v := range vs {
		out[i].v = v
	}
	return out
}

func where(recs []decodedRecord, keep func(decodedRecord) bool) []any {
	var out []any
	for _, r := range recs {
		if keep(r) {
			out = append(out, r.v)
		}
	}
	return out
}

type textLine struct {
	line int
	text string
}

func numberedLines(recs []decodedRecord, keep func(textLine) bool) []string {
	out := []string{}
	for _, r := range recs {
		m := r.v.(map[string]any)
		l := textLine{int(m["line"].(float64)), m["text"].(string)}
		if keep(l) {
			out = append(out, fmt.Sprintf("%d: %s", l.line, l.text))
		}
	}
	return out
}

// groupCount is jq's group_by(key) | map({name: key, count: length}).
func groupCount(recs []decodedRecord, name string, key func(decodedRecord) any) []any {
	var keys []any
	counts := map[string]int{}
	for _, r := range recs {
		k := key(r)
		b, _ := json.Marshal(k)
		if counts[string(b)] == 0 {
			keys = append(keys, k)
		}
		counts[string(b)]++
	}
	slices.SortStableFunc(keys, jqCompare)
	out := []any{}
	for _, k := range keys {
		b, _ := json.Marshal(k)
		out = append(out, map[string]any{name: k, "count": float64(counts[string(b)])})
	}
	return out
}

// top10 is jq's sort_by(key) (stable), reversed when highest, first 10.
func top10(recs []decodedRecord, key func(decodedRecord) any, highest bool) []any {
	sorted := slices.Clone(recs)
	slices.SortStableFunc(sorted, func(a, b decodedRecord) int { return jqCompare(key(a), key(b)) })
	if highest {
		slices.Reverse(sorted)
	}
	return vals(sorted[:min(10, len(sorted))])
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func jqType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// jqCompare orders values as jq does.
func jqCompare(a, b any) int {
	rank := func(v any) int {
		switch x := v.(type) {
		case nil:
			return 0
		case bool:
			if x {
				return 2
			}
			return 1
		case float64:
			return 3
		case string:
			return 4
		case []any:
			return 5
		}
		return 6
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case []any:
		y := b.([]any)
		for i := range min(len(x), len(y)) {
			if c := jqCompare(x[i], y[i]); c != 0 {
				return c
			}
		}
		return len(x) - len(y)
	case map[string]any:
		y := b.(map[string]any)
		kx, ky := sortedKeys(x), sortedKeys(y)
		if c := slices.Compare(kx, ky); c != 0 {
			return c
		}
		for _, k := range kx {
			if c := jqCompare(x[k], y[k]); c != 0 {
				return c
			}
		}
	}
	return 0
}

// jqString1 is jq's tostring of a scalar.
func jqString1(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// matchScalars is any(.. | scalars; tostring | test(re)).
func matchScalars(re *regexp.Regexp, v any) bool {
	switch x := v.(type) {
	case []any:
		return slices.ContainsFunc(x, func(e any) bool { return matchScalars(re, e) })
	case map[string]any:
		for _, e := range x {
			if matchScalars(re, e) {
				return true
			}
		}
		return false
	}
	return re.MatchString(jqString1(v))
}

// TestFieldNamesInJQ: every way the recipes write a field name (a path, a
// path after another, a projection, a constructed key) reads the field in
// jq 1.6 and in gojq, for jq's keywords and names that are no identifiers,
// and the shell form of a recipe that uses them keeps its parameters apart.
func TestFieldNamesInJQ(t *testing.T) {
	names := slices.Clone(recipes.JQKeywords)
	names = append(names, "a b", "a.b", `q"uote`, "it's", "dash-ed", "1st", "ünï", "$value", "$keyword", "",
		"count", `back\slash`, `\(x)`, "new\nline", "tab\t", "emoji 😀", " lead", "日本", "x$value", "ok")
	var kv []any
	var paths, after, proj, built []string
	want := map[string]any{}
	for i, n := range names {
		kv = append(kv, n, float64(i))
		want[n] = float64(i)
		paths = append(paths, recipes.JQPath(n))
		after = append(after, ".[0]"+recipes.JQIndex(n))
		proj = append(proj, recipes.ObjectKey(n))
		built = append(built, recipes.JQKey(n)+": "+recipes.JQPath(n))
	}
	rec := obj(kv...)
	r := Recipe{Filter: fmt.Sprintf("[[%s], ([.] | [%s]), {%s}, {%s}, $value]",
		strings.Join(paths, ", "), strings.Join(after, ", "), strings.Join(proj, ", "), strings.Join(built, ", ")),
		Params: []RecipeParam{{"value", "$value"}}}
	var index []any
	for i := range names {
		index = append(index, float64(i))
	}
	expect := []any{index, index, want, want, "$value"}

	q, err := gojq.Parse(r.Filter)
	require.NoError(t, err)
	code, err := gojq.Compile(q, gojq.WithVariables([]string{"$value"}))
	require.NoError(t, err)
	var in any
	require.NoError(t, json.Unmarshal(rec, &in))
	v, ok := code.Run(in, "$value").Next()
	require.True(t, ok)
	require.NotImplements(t, (*error)(nil), v)
	assert.Equal(t, expect, v, "gojq")

	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("needs the jq binary")
	}
	cmd := exec.Command("jq", "-c", r.ShellFilter())
	cmd.Stdin = bytes.NewReader(rec)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", r.ShellFilter(), out)
	var got any
	require.NoError(t, json.Unmarshal(out, &got))
	assert.Equal(t, expect, got, "jq 1.6")
}

// auditRecords are n typical generic records: an audit log.
func auditRecords(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = obj("id", fmt.Sprintf("evt-%05d", i), "actor", []string{"alice", "bob", "carol"}[i%3],
			"action", []string{"login", "read", "write", "delete"}[i%4], "bytes", i*37%1000,
			"detail", fmt.Sprintf("request %d touched object %d in bucket %d", i, i*7, i%11))
	}
	return out
}

// TestGenericRecipeTokens measures the jq_recipes of a descriptor, in
// tokens, for 600 typical generic records beside 600 memories: the
// inferred recipes cost about what the memory recipes do.
func TestGenericRecipeTokens(t *testing.T) {
	o, err := New(DefaultConfig(), WithFS(lrotest.NewMemFS("/tmp/lro")), WithoutJanitor())
	require.NoError(t, err)
	defer o.Close()
	size := func(set ResultSet) int {
		out, err := o.Offload(context.Background(), set)
		require.NoError(t, err)
		require.Equal(t, Offloaded, out.Action)
		b, err := json.Marshal(out.Response.JQRecipes)
		require.NoError(t, err)
		return len(b) / 4
	}
	var mems, lines []json.RawMessage
	for _, m := range memstore.Generate(600, 42) {
		v, err := memstore.Project(&m, "light")
		require.NoError(t, err)
		b, _ := json.Marshal(v)
		mems = append(mems, b)
	}
	for i := range 3000 {
		lines = append(lines, obj("line", i+1, "text", fmt.Sprintf("2026-11-22T06:00:00Z worker-%d processed batch %d", i%4, i)))
	}
	memory := size(ResultSet{Operation: "recall", Records: mems})
	generic := size(ResultSet{Operation: "audit_log", Generic: true, Records: auditRecords(600)})
	text := size(ResultSet{Operation: "tail_log", Generic: true, Records: lines})
	t.Logf("jq_recipes in tokens: memories %d, 600 generic records %d, 3000 text lines %d", memory, generic, text)
	assert.LessOrEqual(t, generic, memory*11/10)
	assert.LessOrEqual(t, text, memory*12/10)
}

func BenchmarkInferRecipes(b *testing.B) {
	records := auditRecords(recipes.Sample)
	b.ReportAllocs()
	for b.Loop() {
		recipes.Infer(records).Recipes()
	}
}

// recipesOf returns the recipes lro_extract finds for the file name,
// whose header is h.
func recipesOf(o *Offloader, name string, h OffloadHeader) ([]recipes.Recipe, error) {
	return o.extractor.RecipesOfFile(name, h.SchemaVersion, string(h.Detail))
}
