//go:build linux

package extractbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/benchdata"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/mcplro/lro/mcpgo"
)

// A query of the ladder: a recipe (with its parameters), or a query of
// the model's own with the recipe it does the work of.
type ladderCase struct {
	name   string
	recipe int               // 1-10; for a query, the recipe it equals
	query  string            // a query instead of the recipe
	params map[string]string // the recipe's
}

// The cases at every size: a list, a select (of many memories: the
// count must be exact), a group_by, a sort, and the sort and group
// written as queries, and the sort of the latest ten.
var ladderCases = []ladderCase{
	{name: "list", recipe: 1},
	{name: "select", recipe: 2},
	{name: "group", recipe: 6},
	{name: "sort", recipe: 8},
	{name: "group-query", recipe: 6, query: `group_by(.namespace)|map({namespace:.[0].namespace,count:length})`},
	{name: "sort-query", recipe: 8, query: `sort_by(.created)`},
	{name: "latest-query", query: `sort_by(.created)|reverse|.[:10]`},
}

// Every recipe, at 500 records.
var everyRecipe = func() []ladderCase {
	var cs []ladderCase
	for r := 1; r <= lro.RecipeCount; r++ {
		c := ladderCase{name: fmt.Sprintf("recipe=%d", r), recipe: r}
		if r == 3 || r == 10 {
			c.params = map[string]string{"keyword": "quasar"}
		}
		cs = append(cs, c)
	}
	return cs
}()

// BenchmarkExtractLadder measures lro_extract end to end, through an
// in-process MCP client, in its default configuration (queries in worker
// processes), on files of 500, 2,000, 20,000 and 100,000 full memories,
// beside its floors in the same loop: jq 1.6 running the recipe as the
// descriptor writes it (`tail -n +2 FILE | jq ... | head -c32768`, a
// subprocess; skipped without jq) and gojq running it in this process
// (no process start: a floor below gojq's command). Each iteration
// offloads a fresh file (untimed) and times, in turn, the first query of
// it, the same query again, jq and gojq; the metrics are medians in
// milliseconds and their ratios (x-jq = jq/first: above 1, lro_extract's
// first query is that many times faster), and replaced, the worker
// processes that a query's two calls ended (a worker that mapped over
// half its memory limit is replaced after its query). A query of the
// model's own (group-query, sort-query) is compared with the recipe it
// equals: query/recipe, within 1.5 the target.
//
//	LRO_BENCH_DIR=/dev/shm go test -run '^$' -bench ExtractLadder -benchtime 5x ./internal/extractbench
func BenchmarkExtractLadder(b *testing.B) {
	_, err := exec.LookPath("jq")
	hasJQ := err == nil
	for _, n := range []int{500, 2000, 20000, 100000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			l := newLadder(b, n)
			cases := ladderCases
			if n == 500 {
				cases = append(slices.Clip(everyRecipe), ladderCases[4:]...)
			}
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) { l.bench(b, c, hasJQ) })
			}
		})
	}
}

// ladder is a server and its client over files of n memories.
type ladder struct {
	o     *lro.Offloader
	c     *client.Client
	recs  []json.RawMessage
	first map[int]float64 // the first query's median by recipe, for query/recipe
}

func newLadder(b *testing.B, n int) *ladder {
	cfg := lro.DefaultConfig()
	cfg.OutputDir = benchdata.Dir(b)
	o, err := lro.New(cfg, lro.WithoutEnv())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { o.Close() })
	s := memserver.New(memstore.New(nil), o)
	mcpgo.AddExtractTool(s, o)
	c, err := client.NewInProcessClient(s)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(context.Background(), mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	recs := make([]json.RawMessage, n)
	for i, m := range memstore.Generate(n, 42) {
		v, err := memstore.Project(&m, string(lro.DetailFull))
		if err != nil {
			b.Fatal(err)
		}
		if recs[i], err = json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
	l := &ladder{o: o, c: c, recs: recs, first: map[int]float64{}}
	// The workers start once in a process (tens of milliseconds each):
	// one untimed query, then they run.
	d := l.offload(b)
	l.call(b, map[string]any{"file_path": d.FilePath, "query": "length", "slurp": true})
	os.Remove(d.FilePath)
	time.Sleep(200 * time.Millisecond)
	return l
}

func (l *ladder) offload(b *testing.B) *lro.OffloadResponse {
	out, err := l.o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: l.recs})
	if err != nil || out.Action != lro.Offloaded {
		b.Fatal(err, out.Action)
	}
	return out.Response
}

func (l *ladder) call(b *testing.B, args map[string]any) string {
	req := mcp.CallToolRequest{}
	req.Params.Name = lro.ExtractToolName
	req.Params.Arguments = args
	res, err := l.c.CallTool(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	text := res.Content[0].(mcp.TextContent).Text
	if res.IsError {
		b.Fatalf("%v: %.300s", args, text)
	}
	return text
}

func (l *ladder) bench(b *testing.B, c ladderCase, hasJQ bool) {
	var first, second, jq, gojq []time.Duration
	var cpuLRO, cpuJQ, cpuGojq time.Duration // totals, see cpu_test.go
	replaced := 0
	var size int64
	recipe := lro.Recipe{Filter: c.query, Slurp: true}
	if c.query == "" || c.recipe > 0 {
		recipe = l.o.Recipes(lro.DetailFull)[c.recipe-1]
	}
	if c.query != "" {
		recipe.Filter = c.query
	}
	timed := func(into *[]time.Duration, f func()) {
		start := time.Now()
		f()
		*into = append(*into, time.Since(start))
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		d := l.offload(b)
		fi, err := os.Stat(d.FilePath)
		if err != nil {
			b.Fatal(err)
		}
		size = fi.Size()
		args := map[string]any{"file_path": d.FilePath}
		if c.query != "" {
			args["query"], args["slurp"] = c.query, recipe.Slurp
		} else {
			args["recipe"] = c.recipe
			if c.params != nil {
				args["params"] = c.params
			}
		}
		vars := map[string]string{}
		for _, p := range recipe.Params {
			vars[p.Name] = p.Default
			if v, ok := c.params[p.Name]; ok {
				vars[p.Name] = v
			}
		}
		before := children()
		self, workers := cpuSelf(), cpuChildren()
		b.StartTimer()
		timed(&first, func() { l.call(b, args) })
		b.StopTimer()
		cpuLRO += cpuSelf() - self + cpuChildren() - workers
		b.StartTimer()
		timed(&second, func() { l.call(b, args) })
		b.StopTimer()
		for pid := range before {
			if !children()[pid] {
				replaced++
			}
		}
		b.StartTimer()
		if hasJQ {
			waited := cpuWaited()
			timed(&jq, func() { shell(b, jqCommand(d.FilePath, recipe, vars)+" >/dev/null") })
			cpuJQ += cpuWaited() - waited
		}
		self = cpuSelf()
		timed(&gojq, func() { gojqFloor(b, d.FilePath, recipe.Filter, recipe.Slurp, recipe.Raw, vars) })
		cpuGojq += cpuSelf() - self
		b.StopTimer()
		os.Remove(d.FilePath)
		b.StartTimer()
	}
	b.SetBytes(size)
	ms := func(d []time.Duration) float64 { return float64(median(d)) / 1e6 }
	b.ReportMetric(ms(first), "first-ms")
	b.ReportMetric(ms(second), "second-ms")
	b.ReportMetric(ms(first)/ms(second), "first/second")
	b.ReportMetric(ms(gojq), "gojq-ms")
	b.ReportMetric(ms(gojq)/ms(first), "x-gojq")
	if hasJQ {
		b.ReportMetric(ms(jq), "jq-ms")
		b.ReportMetric(ms(jq)/ms(first), "x-jq")
	}
	b.ReportMetric(float64(replaced), "replaced")
	if cpuLRO > 0 {
		// The first query's CPU, the workers' and this process's, against
		// the floors' (sums over the iterations).
		b.ReportMetric(cpuGojq.Seconds()/cpuLRO.Seconds(), "cpu-x-gojq")
		if hasJQ {
			b.ReportMetric(cpuJQ.Seconds()/cpuLRO.Seconds(), "cpu-x-jq")
		}
	}
	if c.query == "" {
		l.first[c.recipe] = ms(first)
	} else if r, ok := l.first[c.recipe]; ok {
		b.ReportMetric(ms(first)/r, "query/recipe")
	}
}

// jqCommand is the recipe's shell command as a descriptor writes it, for
// the file at path, with vars bound.
func jqCommand(path string, r lro.Recipe, vars map[string]string) string {
	args := []string{"jq"}
	if r.Raw {
		args = append(args, "-r")
	}
	if r.Slurp {
		args = append(args, "-s")
	}
	for _, p := range r.Params {
		args = append(args, "--arg", p.Name, "'"+vars[p.Name]+"'")
	}
	return "tail -n +2 " + path + " | " + strings.Join(args, " ") + " '" + r.Filter + "' | head -c32768"
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
