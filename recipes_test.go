package lro_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recipeOutput is what a recipe printed: JSON values, or lines for -r.
type recipeOutput struct {
	values []any
	lines  []string
}

// runShell runs a command with bash and the real jq binary.
func runShell(t *testing.T, command string, raw bool) recipeOutput {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the recipe tests need the jq binary (apt-get install jq); .ci/run installs it")
	}
	return parseOutput(t, lro.RunCut(t, command), raw)
}

func parseOutput(t *testing.T, out []byte, raw bool) recipeOutput {
	t.Helper()
	if raw {
		s := strings.TrimSuffix(string(out), "\n")
		if s == "" {
			return recipeOutput{lines: []string{}}
		}
		return recipeOutput{lines: strings.Split(s, "\n")}
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	vals := []any{}
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		vals = append(vals, v)
	}
	return recipeOutput{values: vals}
}

// runGojq runs r in process with its parameters bound as variables, the way
// lro_extract does, over the record lines of an offloaded file.
func runGojq(t *testing.T, r lro.Recipe, params map[string]string, file []byte) recipeOutput {
	t.Helper()
	q, err := gojq.Parse(r.Filter)
	require.NoError(t, err)
	var names []string
	var values []any
	for _, p := range r.Params {
		names = append(names, "$"+p.Name)
		v, ok := params[p.Name]
		if !ok {
			v = p.Default
		}
		values = append(values, v)
	}
	code, err := gojq.Compile(q, gojq.WithVariables(names))
	require.NoError(t, err)
	var records []any
	lines := bytes.Split(bytes.TrimSuffix(file, []byte("\n")), []byte("\n"))[1:]
	for _, l := range lines {
		var v any
		require.NoError(t, json.Unmarshal(l, &v))
		records = append(records, v)
	}
	inputs := records
	if r.Slurp {
		inputs = []any{records}
	}
	var buf bytes.Buffer
	for _, in := range inputs {
		iter := code.Run(in, values...)
		for {
			v, ok := iter.Next()
			if !ok {
				break
			}
			require.NotImplements(t, (*error)(nil), v, "gojq error: %v", v)
			if s, isStr := v.(string); isStr && r.Raw {
				buf.WriteString(s)
			} else {
				b, err := gojq.Marshal(v)
				require.NoError(t, err)
				buf.Write(b)
			}
			buf.WriteByte('\n')
		}
	}
	return parseOutput(t, buf.Bytes(), r.Raw)
}

// withParams returns the shell command of r with the given parameters.
func withParams(path string, r lro.Recipe, params map[string]string) string {
	for i, p := range r.Params {
		if v, ok := params[p.Name]; ok {
			r.Params = slices.Clone(r.Params)
			r.Params[i].Default = v
		}
	}
	flags := ""
	if r.Raw {
		flags += "-r "
	}
	if r.Slurp {
		flags += "-s "
	}
	return "tail -n +2 '" + path + "' | jq " + flags + "'" + strings.ReplaceAll(r.ShellFilter(), "'", `'\''`) + "'"
}

func ids(vals []any) []string {
	out := []string{}
	for _, v := range vals {
		out = append(out, v.(map[string]any)["id"].(string))
	}
	return out
}

func idsWhere(mems []memstore.Memory, keep func(m memstore.Memory) bool) []string {
	out := []string{}
	for _, m := range mems {
		if keep(m) {
			out = append(out, m.ID)
		}
	}
	return out
}

func countBy(mems []memstore.Memory, key string, f func(memstore.Memory) string) []any {
	counts := map[string]int{}
	for _, m := range mems {
		counts[f(m)]++
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []any{}
	for _, k := range keys {
		out = append(out, map[string]any{key: k, "count": float64(counts[k])})
	}
	return []any{out}
}

// TestRecipesGiveTheRightAnswer runs every recipe of every detail level,
// with the real jq 1.6 binary (the descriptor's command as written, and
// with other parameters) and with gojq (parameters bound as variables), on
// a real offloaded file, and checks each answer against the records.
func TestRecipesGiveTheRightAnswer(t *testing.T) {
	t.Parallel()
	mems := memstore.Generate(200, 42)
	word := firstWord(mems[7].Title)
	tag := mems[3].Tags[0]
	contentWord := firstWord(mems[11].Content)
	params := map[string]string{"namespace": "_episodic", "keyword": word, "type": "procedural", "tag": tag}

	for _, d := range []lro.Detail{lro.DetailLight, lro.DetailMedium, lro.DetailFull} {
		t.Run(string(d), func(t *testing.T) {
			o := newOffloader(t, nil)
			out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: d, Records: memories(t, 200, d)})
			require.NoError(t, err)
			path := out.Response.FilePath
			file := readFile(t, path)
			recipes := o.Recipes(d)
			require.Len(t, recipes, 10)

			check := func(n int, params map[string]string, want func(recipeOutput)) {
				t.Helper()
				r := recipes[n-1]
				if len(params) == 0 { // the descriptor's command, exactly as a model would run it
					want(runShell(t, out.Response.JQRecipes[n-1].Command, r.Raw))
				}
				want(runShell(t, withParams(path, r, params), r.Raw))
				want(runGojq(t, r, params, file))
			}

			check(1, nil, func(o recipeOutput) {
				want := []string{}
				for _, m := range mems {
					want = append(want, m.Title+"\t"+m.Namespace)
				}
				assert.Equal(t, want, o.lines)
			})
			for _, p := range []map[string]string{nil, params} {
				ns := "_semantic"
				if p != nil {
					ns = p["namespace"]
				}
				check(2, p, func(o recipeOutput) {
					want := idsWhere(mems, func(m memstore.Memory) bool { return strings.HasPrefix(m.Namespace, ns) })
					assert.NotEmpty(t, want)
					assert.Equal(t, want, ids(o.values))
				})
			}
			check(3, params, func(o recipeOutput) {
				re := regexp.MustCompile("(?i)" + word)
				want := idsWhere(mems, func(m memstore.Memory) bool { return re.MatchString(m.Title) })
				assert.NotEmpty(t, want)
				assert.Equal(t, want, ids(o.values))
			})
			check(4, nil, func(o recipeOutput) {
				require.Len(t, o.values, len(mems))
				for i, v := range o.values {
					assert.Equal(t, map[string]any{"id": mems[i].ID, "title": mems[i].Title, "namespace": mems[i].Namespace}, v)
				}
			})
			check(5, params, func(o recipeOutput) {
				assert.Equal(t, idsWhere(mems, func(m memstore.Memory) bool { return m.MemoryType == "procedural" }), ids(o.values))
			})
			check(6, nil, func(o recipeOutput) {
				assert.Equal(t, countBy(mems, "namespace", func(m memstore.Memory) string { return m.Namespace }), o.values)
			})
			check(7, params, func(o recipeOutput) {
				want := idsWhere(mems, func(m memstore.Memory) bool { return slices.Contains(m.Tags, tag) })
				assert.NotEmpty(t, want)
				assert.Equal(t, want, ids(o.values))
			})
			check(8, nil, func(o recipeOutput) {
				sorted := slices.Clone(mems)
				slices.SortStableFunc(sorted, func(a, b memstore.Memory) int { return strings.Compare(a.Created, b.Created) })
				require.Len(t, o.values, 1)
				assert.Equal(t, idsWhere(sorted, func(memstore.Memory) bool { return true }), ids(o.values[0].([]any)))
			})
			switch d {
			case lro.DetailLight:
				check(9, nil, func(o recipeOutput) {
					var want []any
					for _, k := range countBy(mems, "namespace", func(m memstore.Memory) string { return m.Namespace })[0].([]any) {
						want = append(want, k.(map[string]any)["namespace"])
					}
					assert.Equal(t, []any{want}, o.values)
				})
				check(10, nil, func(o recipeOutput) {
					assert.Equal(t, countBy(mems, "memory_type", func(m memstore.Memory) string { return m.MemoryType }), o.values)
				})
			default:
				check(9, nil, func(o recipeOutput) {
					require.Len(t, o.values, 1)
					got := o.values[0].([]any)
					require.Len(t, got, len(mems))
					prev := 2.0
					for _, v := range got {
						c := confidence(v.(map[string]any), d)
						assert.LessOrEqual(t, c, prev, "sorted by confidence, highest first")
						prev = c
					}
				})
				check(10, map[string]string{"keyword": contentWord}, func(o recipeOutput) {
					re := regexp.MustCompile("(?i)" + contentWord)
					want := idsWhere(mems, func(m memstore.Memory) bool { return re.MatchString(m.Content) })
					assert.NotEmpty(t, want)
					assert.Equal(t, want, ids(o.values))
				})
			}
		})
	}
}

func confidence(m map[string]any, d lro.Detail) float64 {
	if d == lro.DetailFull {
		return m["provenance"].(map[string]any)["confidence"].(float64)
	}
	return m["confidence"].(float64)
}

// firstWord returns the first word of s longer than four letters.
func firstWord(s string) string {
	for w := range strings.FieldsSeq(s) {
		w = strings.Trim(w, ".,:;!?'\"()")
		if len(w) > 4 && regexp.MustCompile(`^[A-Za-z]+$`).MatchString(w) {
			return w
		}
	}
	panic("no word in " + s)
}

// TestRecipesPrintAtMost32KiB: no recipe, run as written in a shell,
// prints more than 32 KiB, whatever the size of the file: on 20,000
// records they printed up to 3.5 MB into a model's context.
func TestRecipesPrintAtMost32KiB(t *testing.T) {
	t.Parallel()
	testenv.JQ(t)
	n := 2000 // the listing recipes print over 100 KB uncut
	if testenv.Full() {
		n = 20000
	}
	o := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	tickets := make([]json.RawMessage, n)
	for i := range tickets {
		tickets[i] = json.RawMessage(fmt.Sprintf(`{"id":"T-%05d","status":"open","priority":%d,"title":"Ticket %d: the cache is cold","tags":["infra"]}`, i, i%5, i))
	}
	sets := map[string]lro.ResultSet{
		"memories": {Operation: "recall", Detail: lro.DetailFull, Records: memories(t, n, lro.DetailFull)},
		"generic":  {Operation: "tickets", Generic: true, Records: tickets},
	}
	for name, set := range sets {
		t.Run(name, func(t *testing.T) {
			out, err := o.Offload(ctx, set)
			require.NoError(t, err)
			require.Equal(t, lro.Offloaded, out.Action)
			assert.Contains(t, out.Response.Guidance, "32 KB", "the guidance says so")
			uncut := 0
			for _, r := range out.Response.JQRecipes {
				written, err := exec.Command("bash", "-c", r.Command).Output()
				require.NoError(t, err, r.Command)
				assert.LessOrEqual(t, len(written), 32<<10, "%s: %s", r.Description, r.Command)
				uncut = max(uncut, len(lro.RunCut(t, r.Command)))
			}
			assert.Greater(t, uncut, 32<<10, "a recipe's whole output is larger than the cut")
		})
	}
}
