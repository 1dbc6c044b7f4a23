package lro_test

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/memstore"
)

// BenchmarkExtract compares lro_extract, called through an MCP client, with
// the shell way (tail -n +2 FILE | jq ... as a subprocess) in the same run,
// for recipe 6 (count by namespace, slurping) and recipe 3 (title search,
// streaming) on files of 500 and 100,000 full memories. lro_extract keeps
// a 500-record file decoded between queries (a model asks several
// questions of one file); lro_extract-cold turns that cache off, so every
// query decodes the file again. The 100,000-record file (67 MB) is too
// large for the default cache and is always read afresh. Recipe 3 searches
// for a word no title has, so both sides scan the whole file (with a common
// word lro_extract stops early: it shows a threshold's worth).
//
//	go test -run '^$' -bench Extract -benchtime 5x
func BenchmarkExtract(b *testing.B) {
	if _, err := exec.LookPath("jq"); err != nil {
		b.Skip("needs the jq binary")
	}
	for _, n := range []int{500, 100000} {
		o := newOffloader(b, nil, lro.WithExtractLimits(lro.ExtractLimits{MaxHeapBytes: 4 << 30}))
		cold := newOffloader(b, func(c *lro.Config) { c.OutputDir = o.Config().OutputDir },
			lro.WithExtractLimits(lro.ExtractLimits{MaxHeapBytes: 4 << 30, CacheBytes: -1}))
		recs := memories(b, n, lro.DetailFull)
		out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: recs})
		if err != nil || out.Action != lro.Offloaded {
			b.Fatal(err)
		}
		path := out.Response.FilePath
		clients := map[string]*client.Client{}
		for name, off := range map[string]*lro.Offloader{"lro_extract": o, "lro_extract-cold": cold} {
			c, err := client.NewInProcessClient(newMemoryServer(off))
			if err != nil {
				b.Fatal(err)
			}
			initClient(b, c)
			clients[name] = c
		}
		for _, recipe := range []int{6, 3} {
			r := o.Recipes(lro.DetailFull)[recipe-1]
			for _, name := range []string{"lro_extract", "lro_extract-cold"} {
				c := clients[name]
				if n > 500 && name != "lro_extract" {
					continue // the same path: too large to cache
				}
				b.Run(fmt.Sprintf("records=%d/recipe=%d/%s", n, recipe, name), func(b *testing.B) {
					req := mcp.CallToolRequest{}
					req.Params.Name = lro.ExtractToolName
					req.Params.Arguments = map[string]any{"file_path": path, "recipe": recipe, "params": map[string]any{}}
					if recipe == 3 {
						req.Params.Arguments.(map[string]any)["params"] = map[string]any{"keyword": "quasar"}
					}
					b.ReportAllocs()
					for b.Loop() {
						res, err := c.CallTool(context.Background(), req)
						if err != nil || res.IsError {
							b.Fatal(err, res.Content)
						}
					}
				})
			}
			b.Run(fmt.Sprintf("records=%d/recipe=%d/tail+jq", n, recipe), func(b *testing.B) {
				cmd := out.Response.JQRecipes[recipe-1].Command
				if recipe == 3 {
					cmd = withParams(path, r, map[string]string{"keyword": "quasar"})
				}
				for b.Loop() {
					if err := exec.Command("sh", "-c", cmd+" >/dev/null").Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func newMemoryServer(o *lro.Offloader) *server.MCPServer {
	s := memserver.New(memstore.New(nil), o)
	o.AddExtractTool(s)
	return s
}
