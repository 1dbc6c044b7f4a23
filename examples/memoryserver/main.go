// Command memoryserver is an MCP memory server with Large Result
// Offloading: point Claude Desktop or any MCP client at it.
//
//	go run ./examples/memoryserver                 # stdio
//	go run ./examples/memoryserver -http 127.0.0.1:8080   # http://127.0.0.1:8080/mcp
//	go run ./examples/memoryserver -sdk official   # the same server on the official Go SDK
//
// Offloading is configured by the ATLATL_PROMPT__OFFLOAD__* environment
// variables; run with -h for everything else.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	_ "github.com/mcplro/lro/blobfs" // output_dir may be s3://bucket/prefix, shared by replicas
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "memoryserver:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("memoryserver", flag.ContinueOnError)
	corpus := fs.Int("corpus", 500, "number of generated memories in the store")
	corpusFile := fs.String("corpus-file", "", "load MIF memories from this JSONL file (one memory a line) instead of generating them")
	seed := fs.Uint64("seed", 1, "seed of the generated memories")
	httpAddr := fs.String("http", "", "serve streamable HTTP at http://ADDR/mcp instead of stdio, e.g. 127.0.0.1:8080")
	verbose := fs.Bool("v", false, "log offload events to stderr")
	extract := fs.Bool("extract", true, "serve the lro_extract tool, so models without a shell can query offloaded files")
	sdk := fs.String("sdk", "mcp-go", "the Go MCP SDK to serve with: mcp-go or official (github.com/modelcontextprotocol/go-sdk)")
	idle := fs.Duration("session-idle", 10*time.Minute, "with -http, end a session after this long without a request (a client that goes away without ending its session leaves it open)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: memoryserver [flags]

An MCP memory server over an in-memory store of MIF memories, with a tool
of every result shape: recall_memories, inject_context and list_memories
(the specification's), export_memories (typed, with an output schema),
audit_log (plain text) and memory_graph (an object with two large arrays),
and lro_extract to query offloaded results. Results larger than the
offload threshold are written to JSONL files and replaced by a compact
descriptor (Large Result Offloading). The same tools are served on mcp-go
(the default, where recall_memories may also run as a task) or on the
official Go SDK (-sdk official), over stdio or streamable HTTP (-http).

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), `
Environment (the [prompt.offload] configuration):
  ATLATL_PROMPT__OFFLOAD__ENABLED            true or false (default true)
  ATLATL_PROMPT__OFFLOAD__THRESHOLD_TOKENS   offload above this many tokens (default 1600)
  ATLATL_PROMPT__OFFLOAD__TTL_SECONDS        delete files after this long (default 3600)
  ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR         where files go (default %s)
  ATLATL_PROMPT__OFFLOAD__DELIVERY           descriptor, compact or truncate (default descriptor)
  ATLATL_PROMPT__OFFLOAD__SESSION_BUDGET_TOKENS  offload once a session's inline results pass this (default 0: off)
  ATLATL_PROMPT__OFFLOAD__MAX_DIR_BYTES      quota of the output directory (default 1 GiB; -1: none)

With -http, GET /metrics serves the offloader's metrics for Prometheus.
`, lro.DefaultOutputDir())
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *corpus < 0 {
		return fmt.Errorf("invalid -corpus %d: want 0 or more", *corpus)
	}
	if *idle <= 0 {
		return fmt.Errorf("invalid -session-idle %s: want a positive duration", *idle)
	}
	if *sdk != "mcp-go" && *sdk != "official" {
		return fmt.Errorf("invalid -sdk %q: want mcp-go or official", *sdk)
	}

	mems, err := loadCorpus(*corpusFile, *corpus, *seed)
	if err != nil {
		return err
	}
	cfg := lro.DefaultConfig() // lro.New applies the environment over it
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	mp, reader := newMetrics()
	defer shutdownMetrics(mp)
	off, err := lro.New(cfg, append(memserver.Policies(), lro.WithLogger(logger), lro.WithMeterProvider(mp), lro.WithName("memoryserver"))...)
	if err != nil {
		return err
	}
	defer off.Close()
	store := memstore.New(mems)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *sdk == "official" {
		s := memserver.NewOfficial(store, off)
		if *extract {
			gosdk.AddExtractTool(s, off)
		}
		if *httpAddr == "" {
			return s.Run(ctx, &mcp.StdioTransport{})
		}
		return serveHTTP(ctx, officialHTTP(s, *idle), metricsHandler(reader), *httpAddr)
	}
	s := memserver.New(store, off)
	if *extract {
		mcpgo.AddExtractTool(s, off)
	}
	if *httpAddr == "" {
		return mcpgo.ServeStdio(s)
	}
	return serveHTTP(ctx, server.NewStreamableHTTPServer(s, server.WithSessionIdleTTL(*idle)), metricsHandler(reader), *httpAddr)
}

func loadCorpus(file string, n int, seed uint64) ([]memstore.Memory, error) {
	if file == "" {
		return memstore.Generate(n, seed), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return memstore.ReadJSONL(f)
}

// officialHTTP serves s to clients of every protocol version: the SDK's
// transport serves 2026-07-28 only when stateless, and older clients keep
// their sessions (where an LRO proxy announced itself at initialize),
// each ended after idle without a request.
func officialHTTP(s *mcp.Server, idle time.Duration) http.Handler {
	get := func(*http.Request) *mcp.Server { return s }
	sessions := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{SessionTimeout: idle})
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	})
}

// maxRequestBytes bounds a request body: the largest tool call this
// server takes is a few KB of arguments.
const maxRequestBytes = 4 << 20

// serveHTTP serves h at http://addr/mcp, and metrics at /metrics, until
// ctx is done. Request bodies are bounded, and a connection that idles or
// sends its request too slowly is closed; responses have no write timeout,
// since an SSE stream stays open for as long as the client listens.
func serveHTTP(ctx context.Context, h, metrics http.Handler, addr string) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.MaxBytesHandler(h, maxRequestBytes))
	mux.Handle("GET /metrics", metrics)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Fprintf(os.Stderr, "memoryserver: serving streamable HTTP at http://%s/mcp\n", addr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
