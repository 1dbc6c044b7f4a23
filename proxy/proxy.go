package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/mcpgo"
)

// Config configures a [Proxy].
type Config struct {
	// Remote is the URL of the remote streamable-HTTP MCP server,
	// e.g. https://memory.example.com/mcp. Give Remote or Command, not
	// both.
	Remote string
	// Command is a local MCP server to start and speak to over its stdin
	// and stdout: the program (looked up in PATH) and its arguments, e.g.
	// {"npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"}.
	// The proxy starts it in [Proxy.Serve], relays all of MCP between the
	// client and it, and ends it when the client disconnects (see the
	// package documentation, "A local server").
	Command []string
	// Stderr receives the Command's standard error. Nil means os.Stderr.
	Stderr io.Writer
	// Headers are sent with every request to the remote, e.g. an
	// Authorization header.
	Headers map[string]string
	// ProtocolVersion pins the protocol spoken to the remote. Empty means
	// negotiate: 2026-07-28 first, then 2025-11-25 with initialize; and
	// once the client speaks a version older than 2026-07-28, that one,
	// so that the remote's requests to the client (sampling, elicitation),
	// which a server may refuse to send at 2026-07-28, reach it.
	ProtocolVersion string
	// CallTimeout bounds one forwarded call (of a Command: every request
	// of the client). Zero means 5 minutes.
	CallTimeout time.Duration
	// Logger receives connection events. Nil means none. A proxy serving
	// stdio must not log to stdout.
	Logger *slog.Logger
	// Extract serves the lro_extract tool locally (see
	// [mcpgo.AddExtractTool]), hiding a remote tool of that name.
	Extract bool
	// MemoryToolsOnly judges the results of only the remote tools that
	// the Offloader has a policy for ([lro.Host.HasPolicy]: its
	// built-in memory tools, and those given with lro.WithTool or
	// lro.WithAnyTool); the results of the others pass inline, however
	// large. By default every remote tool is judged: one without a policy
	// of the Offloader is offloaded as generic records
	// (lro.ToolPolicy{Generic: true}), and the output schema it lists is
	// widened to admit the descriptor.
	MemoryToolsOnly bool

	// MaxResponseBytes bounds one response of the remote: a JSON body, or
	// the whole event stream that answers one request; of a Command, every
	// message it writes (one line). A call whose
	// response is larger gets a tool error that names this limit; the
	// proxy reads no further. Zero means [DefaultMaxResponseBytes]
	// (64 MiB); negative means no limit.
	MaxResponseBytes int64
	// MaxEventBytes bounds one server-sent event of the remote, on every
	// stream, the long-lived notification streams included (which
	// MaxResponseBytes does not bound). A response comes in one event, so
	// this should be at least MaxResponseBytes. Zero means
	// MaxResponseBytes; negative means no limit.
	MaxEventBytes int64
	// MaxErrorBytes bounds the remote's error text that reaches the
	// client: a tool error of the remote, a JSON-RPC error, the body of an
	// HTTP error. Longer text is cut, with a note that says how much was.
	// Zero means [DefaultMaxErrorBytes] (8 KiB); negative means no
	// limit.
	MaxErrorBytes int64
	// MaxToolsBytes bounds the remote's tool listing: the tools/list
	// results of one listing, all pages together. A listing that is larger
	// is refused, with an error logged that names this limit: the proxy
	// keeps serving the listing it had (none, at the first listing, where
	// [New] fails instead). The proxy keeps only the current listing, and
	// lists again at most once a second however often the remote
	// announces a change. Of a Command, it bounds each listing of the
	// client (all its pages): a larger one gets an error that names this
	// limit. Zero means [DefaultMaxToolsBytes] (4 MiB); negative means no
	// limit.
	MaxToolsBytes int64
	// MaxNotificationBytes bounds each notification of the server that
	// the proxy passes on (notifications/message, notifications/progress,
	// any other): a larger one is cut to a notification of the same
	// method within the limit, its large members (a log message's data, a
	// progress message) cut to strings that end with a marker, and its
	// params' _meta saying so under "io.github.mcplro/cut" (see the
	// package documentation). Zero means [DefaultMaxNotificationBytes]
	// (64 KiB); negative means no limit.
	MaxNotificationBytes int64
	// StopGrace is how long a Command has to exit once its stdin is
	// closed, and again after SIGTERM to its process group, before the
	// group is killed (see [Proxy.Serve]): longer for a server that takes
	// time to save its state. Zero means [DefaultStopGrace] (2 seconds);
	// negative means none: the group is signalled at once.
	StopGrace time.Duration
}

// A Proxy is a local MCP server in front of another MCP server, a local
// stdio server it starts ([Config.Command]) or a remote streamable-HTTP
// one ([Config.Remote]), that relays it and offloads its tools' large
// results on the local disk (see the package documentation). It also says
// that it restores structured content, so that a server on this module
// sends the JSON of a result once, not again as the structured content
// its text repeats; the proxy puts that back before anything reads the
// result.
//
// Serve a client with [Proxy.Serve] (the lro-proxy command serves its
// stdio so). A client in the same process may use [Proxy.Server] of a
// Remote instead, as an mcp-go server, which answers from mcp-go's types.
// The proxy holds no state beyond its files, which its Offloader's
// janitor deletes, and the server's current tool listing.
type Proxy struct {
	cfg   Config
	off   *lro.Offloader
	front *server.MCPServer
	log   *slog.Logger
	lim   proxyLimits
	httpc *http.Client // every upstream connection's, bounded

	sessMu sync.Mutex
	sess   server.ClientSession // the client's session, which answers the remote's requests

	warnMu sync.Mutex
	warned map[string]bool // warnings already logged, by key

	mu      sync.Mutex
	up      *client.Client // nil while disconnected
	tr      *proxyTransport
	dialing chan struct{} // closed when the dial in progress ends

	clientVersion string // the protocol version the client speaks, "" before it is known (see followClient)

	syncMu   sync.Mutex        // serializes tool list syncs
	served   map[string]string // remote tools currently served: name -> raw JSON
	pace     pacer             // the listings a change asks for (a remote), the changes told to the client (a Command)
	order    []string          // the names of served, in the remote's order
	refused  error             // why the last listing was refused, or nil
	features listings          // the remote's prompts, resources, templates served

	pagesMu   sync.Mutex
	cursors   map[any]mcp.Cursor         // the client's cursor of a listing in progress, by request (see passPages)
	remoteFor map[string]map[string]bool // the resources and templates served for the remote, by kind: URI -> true
	retired   int                        // connections retired for what their client kept
	resync    chan struct{}

	child *childConfig // set when the upstream is a Command

	asks    rawAsks      // the remote's requests to the client, as they came
	relayMu sync.Mutex   // guards relay
	relay   *remoteRelay // the Serve in progress of a remote's client, or nil

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	done   sync.WaitGroup
}

const (
	// proxyRetry bounds the wait between reconnection attempts.
	proxyRetry = 5 * time.Second
	// dialTimeout bounds connecting to the remote and listing its tools.
	dialTimeout = 30 * time.Second
	// minResync is the least time between two listings of the remote's
	// tools: a remote that announces changes without pause is listed,
	// and its changes passed on to the clients, at most once in it.
	minResync = time.Second
)

var (
	// errProxyClosed is returned for calls that arrive after Close.
	errProxyClosed = errors.New("lro: proxy is closed")
	// errRetired: a call found its connection retired, again and again.
	errRetired = errors.New("lro: proxy: the connection to the remote was replaced while the call started; try again")
)

// New returns a proxy of the server in cfg, offloading with off (its
// Middleware and, with cfg.Extract, lro_extract).
//
// With cfg.Command, New checks that the command can be run (it looks it
// up in PATH, and fails naming it when it cannot) and starts nothing:
// [Proxy.Serve] starts the server. With cfg.Remote, New returns a proxy of
// the remote server in cfg, offloading with off (its
// Middleware and, with cfg.Extract, lro_extract). It connects and lists the
// remote's tools before it returns (within 30 seconds); if the remote is
// not reachable yet, it keeps trying in the background and serves the
// tools when it comes up. Close the Proxy to stop it (off is not closed).
// opts are added to the local server's options.
//
// New fails, without retrying, on mistakes in cfg, naming them: a remote
// URL that is not http:// or https:// with a host, an unknown
// ProtocolVersion, a remote that answers the first connection as no MCP
// endpoint does or redirects it to another origin, or a first tool
// listing larger than MaxToolsBytes (see the package documentation).
func New(off *lro.Offloader, cfg Config, opts ...server.ServerOption) (*Proxy, error) {
	if off == nil {
		return nil, errors.New("lro: proxy: no Offloader (make one with lro.New)")
	}
	if len(cfg.Command) > 0 {
		if cfg.Remote != "" {
			return nil, fmt.Errorf("lro: proxy: both a remote URL (%s) and a command (%s): give one", cfg.Remote, strings.Join(cfg.Command, " "))
		}
		return newChild(off, cfg, opts)
	}
	remote, err := checkRemoteURL(cfg.Remote)
	if err != nil {
		return nil, err
	}
	if v := cfg.ProtocolVersion; v != "" && !mcp.IsValidProtocolVersion(v) {
		return nil, fmt.Errorf("lro: proxy: unknown protocol version %q; known: %s", v, strings.Join(mcp.ValidProtocolVersions, ", "))
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 5 * time.Minute
	}
	p := &Proxy{cfg: cfg, off: off, log: cfg.Logger, resync: make(chan struct{}, 1), warned: map[string]bool{}, served: map[string]string{}}
	p.lim = resolveLimits(cfg)
	p.httpc = newLimitClient(p.lim, remote, p.asks.note, p.boundNotification)
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	all := append([]server.ServerOption{server.WithToolCapabilities(true), server.WithRecovery(), mcpgo.ServerOption(off)}, p.remoteOptions()...)
	p.front = server.NewMCPServer("lro-proxy", "0.1.0", append(all, opts...)...)
	if cfg.Extract {
		mcpgo.AddExtractTool(p.front, off)
	}
	p.forwardSetLevel()
	p.trackClient()
	p.declareCapabilities()
	p.followClient()
	p.passPages()
	// A client lists the tools as soon as it starts: have them by then
	// when the remote is up, and follow them later when it is not.
	if _, err := p.connect(p.ctx); err != nil {
		if bad := p.misconfigured(err); bad != nil {
			p.cancel()
			p.httpc.CloseIdleConnections()
			return nil, bad
		}
		p.log.Warn("lro proxy: remote not reachable yet; retrying", "remote", cfg.Remote, "error", proxyClip(err.Error(), p.lim.errText))
	} else if err := p.refusedListing(); err != nil {
		p.cancel()
		p.closeUpstream()
		return nil, err
	}
	p.done.Add(2)
	go p.watch()
	go p.syncLoop()
	return p, nil
}

// Server returns the proxy's local MCP server: the part that answers
// lro_extract and the lro:// resources and judges tool results. Serve a
// client with [Proxy.Serve], which relays through it what the proxy does
// not step in; a client of a Remote in the same process may also be
// served Server directly, which answers the remote's listings from
// mcp-go's types (see [Proxy]).
func (p *Proxy) Server() *server.MCPServer { return p.front }

// Close disconnects from the remote and stops reconnecting; with a
// Command, it ends a Serve in progress, which ends the server.
func (p *Proxy) Close() error {
	p.cancel()
	p.done.Wait()
	if p.child == nil {
		p.closeUpstream()
	}
	return nil
}

func (p *Proxy) closeUpstream() {
	p.mu.Lock()
	c := p.up
	p.up = nil
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
	p.httpc.CloseIdleConnections()
}

// warnOnce logs a warning the first time key is seen in this Proxy's life,
// so that what happens at every listing or reconnection is said once.
func (p *Proxy) warnOnce(key, msg string, args ...any) {
	p.warnMu.Lock()
	seen := p.warned[key]
	p.warned[key] = true
	p.warnMu.Unlock()
	if !seen {
		p.log.Warn(msg, args...)
	}
}

// upstream names the server behind the proxy, for messages.
func (p *Proxy) upstream() string {
	if p.child != nil {
		return p.child.name
	}
	return p.cfg.Remote
}
