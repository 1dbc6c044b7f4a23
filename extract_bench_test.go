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
// streaming) on files of 500 and 100,000 full memories.
//
//	go test -run '^$' -bench Extract -benchtime 20x
func BenchmarkExtract(b *testing.B) {
	if _, err := exec.LookPath("jq"); err != nil {
		b.Skip("needs the jq binary")
	}
	for _, n := range []int{500, 100000} {
		o := newOffloader(b, nil, lro.WithExtractLimits(lro.ExtractLimits{MaxHeapBytes: 4 << 30}))
		recs := memories(b, n, lro.DetailFull)
		out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: recs})
		if err != nil || out.Action != lro.Offloaded {
			b.Fatal(err)
		}
		path := out.Response.FilePath
		s := newMemoryServer(o)
		c, err := client.NewInProcessClient(s)
		if err != nil {
			b.Fatal(err)
		}
		initClient(b, c)
		for _, recipe := range []int{6, 3} {
			r := o.Recipes(lro.DetailFull)[recipe-1]
			b.Run(fmt.Sprintf("records=%d/recipe=%d/lro_extract", n, recipe), func(b *testing.B) {
				req := mcp.CallToolRequest{}
				req.Params.Name = lro.ExtractToolName
				req.Params.Arguments = map[string]any{"file_path": path, "recipe": recipe, "params": map[string]any{}}
				if recipe == 3 {
					req.Params.Arguments.(map[string]any)["params"] = map[string]any{"keyword": "failover"}
				}
				b.ReportAllocs()
				for b.Loop() {
					res, err := c.CallTool(context.Background(), req)
					if err != nil || res.IsError {
						b.Fatal(err, res.Content)
					}
				}
			})
			b.Run(fmt.Sprintf("records=%d/recipe=%d/tail+jq", n, recipe), func(b *testing.B) {
				cmd := out.Response.JQRecipes[recipe-1].Command
				if recipe == 3 {
					cmd = withParams(path, r, map[string]string{"keyword": "failover"})
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
