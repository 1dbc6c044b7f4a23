package main

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

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/benchdata"
)

// BenchmarkExtractStdio measures lro_extract as a model meets it: the
// memory server run as a subprocess in its default configuration, called
// through an MCP client over stdio, on a file it has just offloaded (a
// recall of 500 or 100,000 full memories). Each iteration offloads a
// fresh file (untimed), then times, one after the other on that file: the
// first query (no worker has the file's records yet), the same query
// again (second), and the shell way, `tail -n +2 FILE | jq ...` and the
// same piped to `head -c 6400` (about what lro_extract shows at the
// default threshold of 1,600 tokens), each a subprocess. Interleaving
// them makes the ratios hold on a noisy machine where absolute times do
// not. The metrics are medians in milliseconds, and the ratios of those
// medians: jq/first above 1 means lro_extract's first query is faster.
// Recipes 3 and 10, 7 (tag) and the custom select match no record, so
// every side reads the whole file.
//
//	LRO_BENCH_DIR=/dev/shm go test -run '^$' -bench ExtractStdio -benchtime 10x ./examples/memoryserver
func BenchmarkExtractStdio(b *testing.B) {
	if _, err := exec.LookPath("jq"); err != nil {
		b.Skip("needs the jq binary")
	}
	const custom = `select(.title|test("quasar";"i"))|{id,title}`
	for _, n := range []int{500, 100000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			s := startBenchServer(b, n)
			for recipe := 1; recipe <= lro.RecipeCount+1; recipe++ {
				label := fmt.Sprintf("recipe=%d", recipe)
				if recipe > lro.RecipeCount {
					label = "custom-select"
				}
				b.Run(label, func(b *testing.B) { s.bench(b, recipe, custom) })
			}
		})
	}
}

// benchServer is a memory server under benchmark, and its client.
type benchServer struct {
	c *mcpclient.Client
	n int
}

func startBenchServer(b *testing.B, n int) *benchServer {
	out := benchdata.Dir(b)
	c, err := mcpclient.NewStdioMCPClient(serverBin, []string{"ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + out}, "-corpus", fmt.Sprint(n))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		b.Fatal(err)
	}
	return &benchServer{c: c, n: n}
}

// call calls the tool name and returns its text; a query stopped at the
// timeout is counted in *timeouts (when not nil) instead of failing: the
// slurping recipes at 100,000 records come close to it on a busy machine.
func (s *benchServer) call(b *testing.B, name string, args map[string]any, timeouts *int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := mcpgo.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	text := res.Content[0].(mcpgo.TextContent).Text
	if res.IsError {
		if timeouts != nil && strings.Contains(text, "took longer") {
			*timeouts++
			return text
		}
		b.Fatalf("%s: %.300s", name, text)
	}
	return text
}

// offload recalls every memory of the store at full detail, offloaded to
// a new file.
func (s *benchServer) offload(b *testing.B) lro.OffloadResponse {
	text := s.call(b, "recall_memories", map[string]any{"query": "deployment", "limit": s.n, "detail": "full"}, nil)
	var d lro.OffloadResponse
	if err := json.Unmarshal([]byte(text), &d); err != nil || !d.Offloaded {
		b.Fatalf("not offloaded: %v %.200s", err, text)
	}
	return d
}

// bench times recipe (or the custom query, past the last recipe).
func (s *benchServer) bench(b *testing.B, recipe int, custom string) {
	var first, second, jq, jqHead []time.Duration
	var size int64
	timeouts := 0
	timed := func(into *[]time.Duration, f func()) {
		start := time.Now()
		f()
		*into = append(*into, time.Since(start))
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		d := s.offload(b)
		b.StartTimer()
		fi, err := os.Stat(d.FilePath)
		if err != nil {
			b.Fatal(err)
		}
		size = fi.Size()
		args := map[string]any{"file_path": d.FilePath, "recipe": recipe}
		var shell string
		if recipe > lro.RecipeCount {
			args = map[string]any{"file_path": d.FilePath, "query": custom}
			shell = "tail -n +2 " + d.FilePath + " | jq -c '" + custom + "'"
		} else {
			shell = strings.TrimSuffix(d.JQRecipes[recipe-1].Command, "|head -c32768")
			if recipe == 3 || recipe == 10 {
				args["params"] = map[string]any{"keyword": "quasar"}
				shell = strings.Replace(shell, `"KEYWORD"`, `"quasar"`, 1)
			}
		}
		timed(&first, func() { s.call(b, lro.ExtractToolName, args, &timeouts) })
		timed(&second, func() { s.call(b, lro.ExtractToolName, args, &timeouts) })
		timed(&jq, func() { runShell(b, shell+" >/dev/null") })
		timed(&jqHead, func() { runShell(b, shell+" | head -c 6400 >/dev/null") })
		b.StopTimer()
		os.Remove(d.FilePath) // 67 MB each at 100,000
		b.StartTimer()
	}
	b.SetBytes(size)
	ms := func(d []time.Duration) float64 { return float64(median(d)) / 1e6 }
	b.ReportMetric(ms(first), "first-ms")
	b.ReportMetric(ms(second), "second-ms")
	b.ReportMetric(ms(jq), "jq-ms")
	b.ReportMetric(ms(jqHead), "jqhead-ms")
	b.ReportMetric(ms(jq)/ms(first), "jq/first")
	b.ReportMetric(ms(jqHead)/ms(first), "jqhead/first")
	b.ReportMetric(ms(first)/ms(second), "first/second")
	if timeouts > 0 {
		b.ReportMetric(float64(timeouts), "timeouts")
	}
}

func runShell(b *testing.B, cmd string) {
	// pipefail is not POSIX; head closing the pipe early makes jq fail
	// with SIGPIPE, which is the point of the comparison.
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", cmd, err, out)
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
