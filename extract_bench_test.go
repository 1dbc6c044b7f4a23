package lro_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/mcplro/lro/mcpgo"
)

// BenchmarkExtract compares lro_extract, called through an MCP client in
// its default configuration (queries in worker processes, each keeping
// the records it decoded), with the shell way in the same run: tail -n +2
// FILE | jq ... as a subprocess, and the same piped to head -c 6400 (about
// what lro_extract shows at the default threshold of 1,600 tokens), on
// files of 500 and 100,000 full memories. first is the first query of a
// file, offloaded afresh before each (untimed): what a model's first
// question costs. second asks it again of a file queried once already.
// At 500 records: recipes 1, 3 and 6 and a custom select; at 100,000
// every recipe. Recipes 3, 7 and 10 and the custom select match no
// record, so every side reads the whole file (with a common word
// lro_extract stops once its output is full). Worker processes are
// started before the timed calls (see warmWorkers). For the whole path, a
// server run as a subprocess over stdio, see BenchmarkExtractStdio in
// examples/memoryserver.
//
//	LRO_BENCH_DIR=/dev/shm go test -run '^$' -bench 'Extract$' -benchtime 5x -count 5
func BenchmarkExtract(b *testing.B) {
	if _, err := exec.LookPath("jq"); err != nil {
		b.Skip("needs the jq binary")
	}
	const custom = `select(.title|test("quasar";"i"))|{id,title}`
	for _, n := range []int{500, 100000} {
		o := newOffloader(b, func(c *lro.Config) { c.OutputDir = benchDir(b) })
		recs := memories(b, n, lro.DetailFull)
		offload := func() *lro.OffloadResponse {
			out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: recs})
			if err != nil || out.Action != lro.Offloaded {
				b.Fatal(err)
			}
			return out.Response
		}
		d := offload()
		fi, err := os.Stat(d.FilePath)
		if err != nil {
			b.Fatal(err)
		}
		c, err := client.NewInProcessClient(newMemoryServer(o))
		if err != nil {
			b.Fatal(err)
		}
		initClient(b, c)
		warmWorkers(b, c, o, d.FilePath)
		cases := []int{1, 3, 6, 0} // 0: the custom select
		if n > 500 {
			cases = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0}
		}
		for _, recipe := range cases {
			label := fmt.Sprintf("recipe=%d", recipe)
			args := func(path string) map[string]any {
				switch recipe {
				case 0:
					return map[string]any{"file_path": path, "query": custom}
				case 3, 10:
					return map[string]any{"file_path": path, "recipe": recipe, "params": map[string]any{"keyword": "quasar"}}
				}
				return map[string]any{"file_path": path, "recipe": recipe}
			}
			var cmd string
			switch recipe {
			case 0:
				label = "custom-select"
				cmd = "tail -n +2 " + d.FilePath + " | jq -c '" + custom + "'"
			case 3, 10:
				cmd = withParams(d.FilePath, o.Recipes(lro.DetailFull)[recipe-1], map[string]string{"keyword": "quasar"})
			default:
				cmd = strings.TrimSuffix(d.JQRecipes[recipe-1].Command, "|head -c32768")
			}
			call := func(b *testing.B, path string) {
				req := mcp.CallToolRequest{}
				req.Params.Name = lro.ExtractToolName
				req.Params.Arguments = args(path)
				res, err := c.CallTool(context.Background(), req)
				if err != nil || res.IsError {
					b.Fatal(err, res.Content)
				}
			}
			prefix := fmt.Sprintf("records=%d/%s/", n, label)
			b.Run(prefix+"first", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(fi.Size())
				for b.Loop() {
					b.StopTimer()
					path := offload().FilePath
					b.StartTimer()
					call(b, path)
					b.StopTimer()
					os.Remove(path)
					b.StartTimer()
				}
			})
			b.Run(prefix+"second", func(b *testing.B) {
				call(b, d.FilePath)
				b.ReportAllocs()
				b.SetBytes(fi.Size())
				for b.Loop() {
					call(b, d.FilePath)
				}
			})
			for _, shell := range []struct{ name, suffix string }{{"tail+jq", ""}, {"tail+jq+head", " | head -c 6400"}} {
				b.Run(prefix+shell.name, func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(fi.Size())
					for b.Loop() {
						if err := exec.Command("sh", "-c", cmd+shell.suffix+" >/dev/null").Run(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// warmWorkers makes one call of lro_extract through c, untimed, and waits
// for o's worker processes to run: a process starts them once (tens of
// milliseconds each, which the first timed calls would otherwise share
// with the processes starting beside them), and every timed call then
// measures a query.
func warmWorkers(b *testing.B, c *client.Client, o *lro.Offloader, path string) {
	req := mcp.CallToolRequest{}
	req.Params.Name = lro.ExtractToolName
	req.Params.Arguments = map[string]any{"file_path": path, "query": "length", "slurp": true}
	if res, err := c.CallTool(context.Background(), req); err != nil || res.IsError {
		b.Fatal(err, res)
	}
	// The second worker starts in the background; none runs where
	// queries run in process.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if n := len(lro.ExtractWorkerPIDs(o)); n == 0 || n >= 2 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newMemoryServer(o *lro.Offloader) *server.MCPServer {
	s := memserver.New(memstore.New(nil), o)
	mcpgo.AddExtractTool(s, o)
	return s
}
