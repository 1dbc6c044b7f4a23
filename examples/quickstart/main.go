// Command quickstart shows Large Result Offloading in a small MCP server of
// its own (server.go), built on the public API only, so that it can be
// copied as the start of a real one.
//
//	go run ./examples/quickstart          # the demo
//	go run ./examples/quickstart -stdio   # the same server, on stdio
//
// The demo calls the server's one tool, get_logs, for 500 log records
// through an in-process MCP client, and prints the size of the inline
// result against the descriptor the model receives instead, the
// descriptor, and two queries of the offloaded file through lro_extract.
// It writes into a temporary directory and removes it before it exits, so
// it leaves nothing behind.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
)

func main() {
	stdio := flag.Bool("stdio", false, "serve get_logs on stdio instead of running the demo")
	flag.Parse()
	var err error
	if *stdio {
		err = serve()
	} else {
		err = run(context.Background(), os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// serve is what a real server does: files go to the default directory,
// $TMPDIR/lro-{uid}, and the janitor deletes each one an hour after it
// was written.
func serve() error {
	off, err := newOffloader(lro.DefaultConfig())
	if err != nil {
		return err
	}
	defer off.Close()
	s := newServer(mcpgo.ServerOption(off))
	mcpgo.AddExtractTool(s, off)
	return mcpgo.ServeStdio(s)
}

// run is the demo. Its files go to a directory of their own, removed at
// the end whatever happens.
func run(ctx context.Context, w io.Writer) (err error) {
	dir, err := os.MkdirTemp("", "lro-quickstart-")
	if err != nil {
		return err
	}
	cfg := lro.DefaultConfig()
	cfg.OutputDir = dir
	// The demo's directory is its own, whatever the environment says.
	off, err := newOffloader(cfg, lro.WithoutEnv())
	if err != nil {
		return errors.Join(err, os.RemoveAll(dir))
	}
	defer func() {
		err = errors.Join(err, off.Close(), os.RemoveAll(dir))
		if err == nil {
			fmt.Fprintf(w, "\nRemoved %s and the file in it. A real server (-stdio) keeps its files in\n%s until the janitor deletes each one, %d s (ttl_seconds) after it was written.\n",
				dir, lro.DefaultOutputDir(), cfg.TTLSeconds)
		}
	}()

	args := map[string]any{"service": "checkout", "limit": 500}
	plain, err := connect(ctx, newServer()) // the same server, without offloading
	if err != nil {
		return err
	}
	defer plain.Close()
	inline, inlineWire, err := callTool(ctx, plain, "get_logs", args)
	if err != nil {
		return err
	}
	s := newServer(mcpgo.ServerOption(off))
	mcpgo.AddExtractTool(s, off)
	c, err := connect(ctx, s)
	if err != nil {
		return err
	}
	defer c.Close()
	offloaded, offloadedWire, err := callTool(ctx, c, "get_logs", args)
	if err != nil {
		return err
	}
	var desc lro.OffloadResponse
	if err := json.Unmarshal([]byte(offloaded), &desc); err != nil || !desc.Offloaded {
		return fmt.Errorf("expected an offload descriptor, got %.200s", offloaded)
	}

	est := lro.HeuristicEstimator{}
	fmt.Fprintf(w, "get_logs(service=%q, limit=%d)\n\n", args["service"], args["limit"])
	fmt.Fprintf(w, "                  text the model reads     whole result on the wire\n")
	fmt.Fprintf(w, "  inline result:  %7d bytes ~%6d tok   %8d bytes (text + structuredContent)\n",
		len(inline), est.EstimateTokens([]byte(inline)), inlineWire)
	fmt.Fprintf(w, "  descriptor:     %7d bytes ~%6d tok   %8d bytes\n\n",
		len(offloaded), est.EstimateTokens([]byte(offloaded)), offloadedWire)
	fmt.Fprintf(w, "The descriptor the model receives instead:\n%s\n", indentJSON(offloaded))

	// A model with a shell runs the jq_recipes; one without calls
	// lro_extract, with a recipe number or its own jq filter.
	for i, r := range desc.JQRecipes {
		if r.Description == "Count by level" {
			if err := extract(ctx, w, c, desc.FilePath, "recipe", i+1); err != nil {
				return err
			}
		}
	}
	return extract(ctx, w, c, desc.FilePath, "query", `select(.level == "ERROR") | {time, message}`)
}

// extract calls lro_extract and prints the first lines of what it returns.
func extract(ctx context.Context, w io.Writer, c *client.Client, path, key string, value any) error {
	text, _, err := callTool(ctx, c, lro.ExtractToolName, map[string]any{"file_path": path, key: value})
	if err != nil {
		return err
	}
	arg, _ := json.Marshal(value)
	fmt.Fprintf(w, "\nlro_extract(file_path, %s=%s):\n%s", key, arg, indent(head(text, 6)))
	return nil
}

// connect returns an initialized in-process client of s.
func connect(ctx context.Context, s *server.MCPServer) (*client.Client, error) {
	c, err := client.NewInProcessClient(s)
	if err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "quickstart", Version: "1"}
	err = c.Start(ctx)
	if err == nil {
		_, err = c.Initialize(ctx, init)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// callTool returns the text of a tool's result, the text the model reads,
// and the size of the whole result on the wire.
func callTool(ctx context.Context, c *client.Client, name string, args map[string]any) (string, int, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", 0, err
	}
	if len(res.Content) == 0 {
		return "", 0, fmt.Errorf("%s returned no content", name)
	}
	text, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		return "", 0, fmt.Errorf("%s returned %T", name, res.Content[0])
	}
	if res.IsError {
		return "", 0, fmt.Errorf("%s failed: %s", name, text.Text)
	}
	wire, err := json.Marshal(res)
	return text.Text, len(wire), err
}

// indentJSON returns the JSON text indented, as it came: what the model
// receives, not a Go value encoded again (which would add the fields the
// wire leaves out).
func indentJSON(text string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(text), "", "  "); err != nil {
		return text
	}
	return b.String() + "\n"
}

func head(s string, n int) string {
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("... (%d more lines)\n", len(lines)-n)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
