// Command lro-proxy is a local stdio MCP server in front of another MCP
// server, a local one it starts (any stdio server, in any language) or a
// remote streamable-HTTP one: it relays the server and offloads large tool
// results to JSONL files on this machine, where the model's shell (or the
// lro_extract tool) can read them.
//
//	go install github.com/mcplro/lro/cmd/lro-proxy@latest
//	lro-proxy -- npx -y @modelcontextprotocol/server-filesystem /data
//	LRO_REMOTE_AUTH="Bearer $TOKEN" lro-proxy -remote https://memory.example.com/mcp -header-env Authorization=LRO_REMOTE_AUTH
//
// With a command after --, lro-proxy starts it with its own environment and
// working directory (its stderr goes to lro-proxy's), relays all of MCP
// between the client and it, and ends it when the client disconnects (on
// Linux also when lro-proxy is killed). When the server exits, the calls
// waiting get an error that says so and lro-proxy exits with status 1 and
// the reason. Each message of the server is bounded by
// -max-response-bytes and each request by -timeout.
//
// The large results of every remote tool are offloaded (the memory tools'
// as memories, the others as generic records, their output schemas widened
// to admit the descriptor); -memory-tools-only narrows that to the memory
// tools. Offloading is configured by the ATLATL_PROMPT__OFFLOAD__*
// environment variables, as for the library. Run with -h for the rest.
//
// The proxy bounds what the remote sends: a response larger than
// -max-response-bytes (default 64 MiB) or a server-sent event larger than
// -max-event-bytes is not read, and the call gets a tool error naming the
// limit; a remote error is cut at -max-error-bytes (default 8 KiB). The
// server's tool listing (remote or COMMAND) is kept to -max-tools-bytes
// (default 4 MiB) and read again, or its change told to the client, at
// most once a second, however often the server announces a change. A remote result that looks like an offload descriptor reaches the client
// as a tool error that says the proxy did not write it (see proxy.Proxy).
//
// Mistakes in the configuration stop it at once, with the reason and exit
// status 1: a -remote URL that is not http:// or https://, a remote that
// answers HTTP 404 (a wrong path), 401 or 403 (no credentials), or with a
// web page. A remote that is merely down is retried in the background.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/records"
	"github.com/mcplro/lro/proxy"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "lro-proxy:", err)
		os.Exit(1)
	}
}

// headerEnv collects -header-env NAME=VARIABLE flags.
type headerEnv map[string]string

func (h headerEnv) String() string { return fmt.Sprint(map[string]string(h)) }

func (h headerEnv) Set(v string) error {
	name, variable, ok := strings.Cut(v, "=")
	if !ok || name == "" || variable == "" {
		return fmt.Errorf("want HEADER=VARIABLE, e.g. Authorization=LRO_REMOTE_AUTH, got %q", v)
	}
	value, set := os.LookupEnv(variable)
	if !set {
		return fmt.Errorf("environment variable %s (for header %s) is not set", variable, name)
	}
	h[name] = value
	return nil
}

// recordsEnv is the variable that names the records of tools, as
// -records does: TOOL=PATH entries separated by commas.
const recordsEnv = lro.DefaultEnvPrefix + "_PROMPT__OFFLOAD__RECORDS"

// recordsPaths collects -records TOOL=PATH flags: the path of the records
// in the results of TOOL (lro.ToolPolicy.RecordsField).
type recordsPaths map[string]string

func (r recordsPaths) String() string { return fmt.Sprint(map[string]string(r)) }

func (r recordsPaths) Set(v string) error {
	tool, path, ok := strings.Cut(v, "=")
	tool, path = strings.TrimSpace(tool), strings.TrimSpace(path)
	if !ok || tool == "" || path == "" {
		return fmt.Errorf("want TOOL=PATH, e.g. execute_sql=data.statements[0].rows, got %q", v)
	}
	if err := records.CheckPath(path); err != nil {
		return fmt.Errorf("tool %s: %w", tool, err)
	}
	r[tool] = path
	return nil
}

// policies returns the tool policies the records paths make: generic
// records, found at their path.
func (r recordsPaths) policies() []lro.Option {
	var opts []lro.Option
	for tool, path := range r {
		opts = append(opts, lro.WithTool(tool, lro.ToolPolicy{Generic: true, RecordsField: path}))
	}
	return opts
}

// byteSize is a flag of a number of bytes: 1048576, 64KiB, 64MiB, 1GiB (or
// KB, MB, GB, also powers of two), 0 for the default, -1 for no limit.
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(v string) error {
	num := strings.TrimSpace(v)
	unit := int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, unit = strings.TrimSpace(rest), u.n
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || (n < 0 && n != -1) || (n > 0 && n > math.MaxInt64/unit) {
		return fmt.Errorf("want a number of bytes such as 1048576, 64KiB or 64MiB (0: the default, -1: no limit), got %q", v)
	}
	*b = byteSize(n * unit)
	return nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("lro-proxy", flag.ContinueOnError)
	remote := fs.String("remote", "", "URL of a remote streamable-HTTP MCP server, e.g. https://memory.example.com/mcp (or give a local server's command after --)")
	headers := headerEnv{}
	fs.Var(headers, "header-env", "send the header HEADER with the value of the environment variable VARIABLE (HEADER=VARIABLE, repeatable); secrets never go on the command line")
	recordsAt := recordsPaths{}
	fs.Var(recordsAt, "records", "the records of TOOL's results are at PATH, where detection cannot know (TOOL=PATH, repeatable): names joined by dots, an element's index in brackets, e.g. execute_sql=data.statements[0].rows; also "+recordsEnv+", entries separated by commas, which the flag overrides per tool")
	protocol := fs.String("protocol", "", "pin the protocol version spoken to the remote, e.g. 2025-11-25 (default: negotiate, newest first, then the client's when it is older)")
	extract := fs.Bool("extract", true, "serve the lro_extract tool, so models without a shell can query offloaded files")
	memoryOnly := fs.Bool("memory-tools-only", false, "offload the large results of the memory tools only (recall_memories, inject_context, list_memories, the search tools); by default every remote tool's are")
	offloadAll := fs.Bool("offload-all", false, "the default now, kept for old command lines: every remote tool's large results are offloaded")
	timeout := fs.Duration("timeout", 5*time.Minute, "longest wait for one call of the server (of a local server: for any request)")
	stopGrace := fs.Duration("stop-grace", proxy.DefaultStopGrace, "how long a local server has to exit once its input ends, and again after SIGTERM, before it is killed (negative: no wait)")
	verbose := fs.Bool("v", false, "log connection and offload events to stderr")
	var maxResponse, maxEvent, maxError, maxTools, maxNotification byteSize
	fs.Var(&maxResponse, "max-response-bytes", "the largest response of the remote (of a local server: any message) the proxy reads, e.g. 64MiB; a call past it gets an error naming the limit (0: 64 MiB, -1: no limit)")
	fs.Var(&maxEvent, "max-event-bytes", "the largest server-sent event of the remote the proxy reads, on any stream (0: as -max-response-bytes, -1: no limit)")
	fs.Var(&maxTools, "max-tools-bytes", "the largest tool listing of the server (remote or COMMAND) the proxy takes (all pages); a larger one is refused with an error and the tools served so far stay (0: 4 MiB, -1: no limit)")
	fs.Var(&maxNotification, "max-notification-bytes", "the largest notification of the server (a log message, a progress message, any other) the client gets whole; a larger one is cut to it, its large members ending with a marker (0: 64 KiB, -1: no limit)")
	fs.Var(&maxError, "max-error-bytes", "how much of a remote error reaches the model; the rest is cut, with a note (0: 8 KiB, -1: no limit)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: lro-proxy [flags] -- COMMAND [ARGS...]
       lro-proxy [flags] -remote URL

A local stdio MCP server in front of another MCP server, which it starts
(COMMAND, any stdio MCP server) or reaches (-remote, streamable HTTP). It
relays the server and offloads large tool results to JSONL files on this
machine (the LRO specification's local proxy), those of every tool unless
-memory-tools-only. It tells the server it is a proxy (clientInfo.proxy =
true), so a server that offloads on its own returns full results.

Flags:
`)
		fs.PrintDefaults()
		printEnvironment(fs.Output())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	command := fs.Args()
	switch {
	case *remote == "" && len(command) == 0:
		fs.Usage()
		return errors.New("give a server: -- COMMAND [ARGS...] (a local stdio server) or -remote URL")
	case *remote != "" && len(command) > 0:
		return fmt.Errorf("both -remote %s and a command (%s): give one", *remote, strings.Join(command, " "))
	}
	if *offloadAll && *memoryOnly {
		return errors.New("-offload-all and -memory-tools-only contradict each other: every remote tool is offloaded by default, -memory-tools-only alone narrows that")
	}

	if err := recordsFromEnv(recordsAt); err != nil {
		refuseClient(os.Stdin, os.Stdout, err)
		return err
	}

	cfg := lro.DefaultConfig() // lro.New applies the environment over it
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	off, err := lro.New(cfg, append(recordsAt.policies(), lro.WithLogger(logger))...)
	if err != nil {
		// A malformed ATLATL_PROMPT__OFFLOAD__* variable: the client is told
		// which, not only the host's log.
		refuseClient(os.Stdin, os.Stdout, err)
		return err
	}
	defer off.Close()
	p, err := proxy.New(off, proxy.Config{
		Remote:               *remote,
		Command:              command,
		Headers:              headers,
		ProtocolVersion:      *protocol,
		CallTimeout:          *timeout,
		Logger:               logger,
		Extract:              *extract,
		MemoryToolsOnly:      *memoryOnly,
		MaxResponseBytes:     int64(maxResponse),
		MaxEventBytes:        int64(maxEvent),
		MaxErrorBytes:        int64(maxError),
		MaxToolsBytes:        int64(maxTools),
		MaxNotificationBytes: int64(maxNotification),
		StopGrace:            *stopGrace,
	})
	if err != nil {
		return err
	}
	defer p.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return p.Serve(ctx, os.Stdin, os.Stdout)
}

// recordsFromEnv adds the entries of recordsEnv to r, those of the
// command line (already in r) winning.
func recordsFromEnv(r recordsPaths) error {
	v, ok := os.LookupEnv(recordsEnv)
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	env := recordsPaths{}
	for entry := range strings.SplitSeq(v, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		if err := env.Set(entry); err != nil {
			return fmt.Errorf("%s: %w", recordsEnv, err)
		}
	}
	for tool, path := range env {
		if _, set := r[tool]; !set {
			r[tool] = path
		}
	}
	return nil
}

// printEnvironment writes the offload variables, each with its default
// (README's "Configuration" lists the same; TestProxyHelpNamesEveryVariable).
func printEnvironment(w io.Writer) {
	d := lro.DefaultConfig()
	fmt.Fprintf(w, "\nEnvironment (the offload configuration; the server gets it too):\n")
	for _, v := range []struct{ name, def string }{
		{"ENABLED", strconv.FormatBool(*d.Enabled)},
		{"THRESHOLD_TOKENS", strconv.Itoa(d.ThresholdTokens)},
		{"TTL_SECONDS", strconv.FormatInt(d.TTLSeconds, 10)},
		{"OUTPUT_DIR", lro.DefaultOutputDir()},
		{"FILE_PREFIX", d.FilePrefix},
		{"DELIVERY", string(d.Delivery) + " (or compact, truncate)"},
		{"SESSION_BUDGET_TOKENS", "0 (off)"},
		{"MAX_DIR_BYTES", strconv.FormatInt(d.MaxDirBytes, 10) + " (-1: no quota)"},
	} {
		fmt.Fprintf(w, "  ATLATL_PROMPT__OFFLOAD__%-22s default %s\n", v.name, v.def)
	}
	fmt.Fprintf(w, "\nEnvironment of the proxy alone:\n  %-46s TOOL=PATH,TOOL=PATH as -records (none by default)\n", recordsEnv)
}
