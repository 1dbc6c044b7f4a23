// Command quickstart shows Large Result Offloading end to end: it starts
// the example memory server in process, calls recall_memories for 200
// full-detail memories through a real MCP client, and shows what the
// model would have received inline against what it receives instead.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/memstore"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	store := memstore.New(memstore.Generate(2000, 1))
	args := map[string]any{"query": "database failover", "limit": 200, "detail": "full"}

	// The same server twice: without offloading, to measure what would be
	// sent inline, and with it.
	inline, inlineWire, err := call(ctx, memserver.New(store, nil), args)
	if err != nil {
		return err
	}
	off, err := lro.New(lro.DefaultConfig())
	if err != nil {
		return err
	}
	defer off.Close()
	offloaded, offloadedWire, err := call(ctx, memserver.New(store, off), args)
	if err != nil {
		return err
	}

	var desc lro.OffloadResponse
	if err := json.Unmarshal([]byte(offloaded), &desc); err != nil || !desc.Offloaded {
		return fmt.Errorf("expected an offload descriptor, got %.200s", offloaded)
	}
	est := lro.HeuristicEstimator{}
	fmt.Fprintf(w, "recall_memories(query=%q, limit=200, detail=full)\n\n", args["query"])
	fmt.Fprintf(w, "                  text the model reads     whole result on the wire\n")
	fmt.Fprintf(w, "  inline result:  %7d bytes ~%6d tok   %8d bytes (text + structuredContent)\n",
		len(inline), est.EstimateTokens([]byte(inline)), inlineWire)
	fmt.Fprintf(w, "  descriptor:     %7d bytes ~%6d tok   %8d bytes\n\n",
		len(offloaded), est.EstimateTokens([]byte(offloaded)), offloadedWire)

	pretty, _ := json.MarshalIndent(desc, "", "  ")
	fmt.Fprintf(w, "The descriptor the model receives:\n%s\n\n", pretty)

	for _, i := range []int{0, 5} { // recipe 1 (titles) and 6 (count by namespace)
		r := desc.JQRecipes[i]
		out, err := runRecipe(off, desc, i)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "Recipe %d, %s:\n  $ %s\n%s\n", i+1, r.Description, r.Command, indent(head(out, 8)))
	}
	return nil
}

// call calls recall_memories through an in-process MCP client and returns
// the text the model would see and the size of the whole result.
func call(ctx context.Context, s *server.MCPServer, args map[string]any) (string, int, error) {
	c, err := client.NewInProcessClient(s)
	if err != nil {
		return "", 0, err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return "", 0, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "quickstart", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return "", 0, err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "recall_memories"
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", 0, err
	}
	if res.IsError || len(res.Content) == 0 {
		return "", 0, fmt.Errorf("recall_memories failed: %v", res.Content)
	}
	text, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		return "", 0, fmt.Errorf("unexpected content %T", res.Content[0])
	}
	wire, err := json.Marshal(res)
	return text.Text, len(wire), err
}

// runRecipe runs a recipe's shell command with the jq binary, or, on a
// machine without jq, the same jq program in process.
func runRecipe(off *lro.Offloader, desc lro.OffloadResponse, i int) (string, error) {
	if _, err := exec.LookPath("jq"); err == nil {
		out, err := exec.Command("sh", "-c", desc.JQRecipes[i].Command).Output()
		return string(out), err
	}
	return runInProcess(off.Recipes(desc.Summary.Detail)[i], desc.FilePath)
}

func head(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("  ... (%d more lines)\n", len(lines)-n)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
