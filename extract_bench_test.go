package lro_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/memstore"
)

// BenchmarkExtract compares lro_extract, called through an MCP client, with
// the shell way (tail -n +2 FILE | jq ... as a subprocess) in the same run,
// on files of 500 and 100,000 full memories. lro_extract-cold has its cache
// turned off, so every query decodes the file again (the first query of a
// file); lro_extract keeps a 500-record file decoded between queries (a
// model asks several questions of one file). At 500 records: recipes 1, 3
// and 6 and a custom select; at 100,000 every recipe, cold. Recipe 3, 10
// and the custom select search for a word no record has, so both sides
// scan the whole file (with a common word lro_extract stops early: it
// shows a threshold's worth). Worker processes are started before the
// timed calls (see warmWorkers).
//
//	go test -run '^$' -bench Extract -benchtime 5x -count 5
func BenchmarkExtract(b *testing.B) {
	if _, err := exec.LookPath("jq"); err != nil {
		b.Skip("needs the jq binary")
	}
	const custom = `select(.title|test("quasar";"i"))|{id,title}`
	for _, n := range []int{500, 100000} {
		// A 4 GiB budget: workers of 1.8 GiB. Within the default 1 GiB
		// (two workers of 384 MiB), recipes 8 and 9 at 100,000 records
		// take 4.5-7.3 s, their collector working near the limit.
		o := newOffloader(b, func(c *lro.Config) { c.OutputDir = benchDir(b) }, lro.WithExtractLimits(lro.ExtractLimits{MaxHeapBytes: 4 << 30, MemoryBudget: 4 << 30}))
		cold := newOffloader(b, func(c *lro.Config) { c.OutputDir = o.Config().OutputDir },
			lro.WithExtractLimits(lro.ExtractLimits{MaxHeapBytes: 4 << 30, CacheBytes: -1, MemoryBudget: 4 << 30}))
		recs := memories(b, n, lro.DetailFull)
		out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: recs})
		if err != nil || out.Action != lro.Offloaded {
			b.Fatal(err)
		}
		path := out.Response.FilePath
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		clients := map[string]*client.Client{}
		for name, off := range map[string]*lro.Offloader{"lro_extract": o, "lro_extract-cold": cold} {
			c, err := client.NewInProcessClient(newMemoryServer(off))
			if err != nil {
				b.Fatal(err)
			}
			initClient(b, c)
			clients[name] = c
			warmWorkers(b, c, off, path)
		}
		cases := []int{1, 3, 6, 0} // 0: the custom select
		if n > 500 {
			cases = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
		}
		for _, recipe := range cases {
			label := fmt.Sprintf("recipe=%d", recipe)
			args := map[string]any{"file_path": path, "recipe": recipe, "params": map[string]any{}}
			var cmd string
			switch {
			case recipe == 0:
				label = "custom-select"
				args = map[string]any{"file_path": path, "query": custom}
				cmd = "tail -n +2 " + path + " | jq -c '" + custom + "'"
			case recipe == 3 || recipe == 10:
				args["params"] = map[string]any{"keyword": "quasar"}
				cmd = withParams(path, o.Recipes(lro.DetailFull)[recipe-1], map[string]string{"keyword": "quasar"})
			default:
				cmd = out.Response.JQRecipes[recipe-1].Command
			}
			for _, name := range []string{"lro_extract-cold", "lro_extract"} {
				if n > 500 && name != "lro_extract-cold" {
					continue
				}
				c := clients[name]
				b.Run(fmt.Sprintf("records=%d/%s/%s", n, label, name), func(b *testing.B) {
					req := mcp.CallToolRequest{}
					req.Params.Name = lro.ExtractToolName
					req.Params.Arguments = args
					b.ReportAllocs()
					b.SetBytes(fi.Size())
					for b.Loop() {
						res, err := c.CallTool(context.Background(), req)
						if err != nil || res.IsError {
							b.Fatal(err, res.Content)
						}
					}
				})
			}
			b.Run(fmt.Sprintf("records=%d/%s/tail+jq", n, label), func(b *testing.B) {
				b.SetBytes(fi.Size())
				for b.Loop() {
					if err := exec.Command("sh", "-c", cmd+" >/dev/null").Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// warmWorkers makes one call of lro_extract through c, untimed, and waits
// for o's worker processes to run: a process starts them once (tens of
// milliseconds each, which the first timed calls would otherwise share
// with the processes starting beside them), and every timed call then
// measures a query. The cold Offloader still decodes the file at every
// call: its cache is off.
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
	o.AddExtractTool(s)
	return s
}
