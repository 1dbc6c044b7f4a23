package proxy

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/proxywire"
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
	// negotiate: 2026-07-28 first, then 2025-11-25 with initialize.
	ProtocolVersion string
	// CallTimeout bounds one forwarded call (of a Command: every request
	// of the client). Zero means 5 minutes.
	CallTimeout time.Duration
	// Logger receives connection events. Nil means none. A proxy serving
	// stdio must not log to stdout.
	Logger *slog.Logger
	// Extract serves the lro_extract tool locally (see
	// [lro.Offloader.AddExtractTool]), hiding a remote tool of that name.
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
	p.lim.response = resolveLimit(cfg.MaxResponseBytes, DefaultMaxResponseBytes)
	p.lim.event = resolveLimit(cfg.MaxEventBytes, p.lim.response)
	p.lim.errText = resolveLimit(cfg.MaxErrorBytes, DefaultMaxErrorBytes)
	p.lim.tools = resolveLimit(cfg.MaxToolsBytes, DefaultMaxToolsBytes)
	p.httpc = newLimitClient(p.lim, remote, p.asks.note)
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	all := append([]server.ServerOption{server.WithToolCapabilities(true), server.WithRecovery(), off.ServerOption()}, p.remoteOptions()...)
	p.front = server.NewMCPServer("lro-proxy", "0.1.0", append(all, opts...)...)
	if cfg.Extract {
		off.AddExtractTool(p.front)
	}
	p.forwardSetLevel()
	p.trackClient()
	p.declareCapabilities()
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

// refusedListing returns the error of the last listing when it was
// refused and nothing of the remote is served, or nil.
func (p *Proxy) refusedListing() error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if p.refused != nil && len(p.served) == 0 {
		return fmt.Errorf("lro: proxy: the remote %s: %w (Config.MaxToolsBytes; lro-proxy -max-tools-bytes)", p.cfg.Remote, p.refused)
	}
	return nil
}

// checkRemoteURL says what is wrong with the remote URL, or nil.
func checkRemoteURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("lro: proxy: no remote URL")
	}
	// "localhost:8080/mcp" parses with the scheme "localhost"; "127.0.0.1:8080/mcp" does not parse.
	hint := ""
	if !strings.Contains(raw, "://") {
		hint = fmt.Sprintf(" (did you mean http://%s?)", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("lro: proxy: the remote URL %q is not valid: %v%s", raw, errors.Unwrap(err), hint)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return nil, fmt.Errorf("lro: proxy: the remote URL %q has no scheme: it must start with http:// or https://%s", raw, hint)
	default:
		return nil, fmt.Errorf("lro: proxy: the remote URL %q has the scheme %q: the remote must be a streamable-HTTP server at an http:// or https:// URL%s", raw, u.Scheme, hint)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("lro: proxy: the remote URL %q has no host", raw)
	}
	return u, nil
}

// misconfigured returns the error New fails with when err, from the
// first connection, is the answer of a remote that is up but that no
// retry would change: a wrong path, missing credentials, no MCP endpoint,
// a pinned protocol version it does not speak. Anything else (refused,
// timed out, HTTP 5xx, 408, 429) may be a remote that is merely down: nil.
func (p *Proxy) misconfigured(err error) error {
	var unsupported mcp.UnsupportedProtocolVersionError
	if p.cfg.ProtocolVersion != "" && errors.As(err, &unsupported) {
		return fmt.Errorf("lro: proxy: the remote %s does not speak protocol %s (ProtocolVersion): %w", p.cfg.Remote, p.cfg.ProtocolVersion, err)
	}
	var cert *tls.CertificateVerificationError
	var redirect *redirectError
	switch {
	case errors.As(err, &redirect):
		return fmt.Errorf("lro: proxy: %s: %w", p.cfg.Remote, redirect)
	case errors.As(err, &cert):
		return fmt.Errorf("lro: proxy: the remote %s: its TLS certificate cannot be verified: %w", p.cfg.Remote, cert)
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"): // net/http's text, no type
		return fmt.Errorf("lro: proxy: the remote %s answers plain HTTP: use an http:// URL", p.cfg.Remote)
	}
	var he *remoteHTTPError
	if !errors.As(err, &he) {
		return nil
	}
	why := ""
	switch s := he.status; {
	case he.mediaType != "" || s == http.StatusOK || s == http.StatusAccepted:
		why = fmt.Sprintf("answered with content type %q, not JSON or an event stream: is this the MCP endpoint?", he.mediaType)
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		why = fmt.Sprintf("answered HTTP %d %s: it wants credentials (Config.Headers; lro-proxy -header-env Authorization=VARIABLE)", s, http.StatusText(s))
	case s == http.StatusNotFound:
		why = "answered HTTP 404 Not Found: is the path right? (streamable-HTTP MCP endpoints are often at /mcp)"
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		return nil
	default:
		why = fmt.Sprintf("answered HTTP %d %s: it is not a streamable-HTTP MCP endpoint (an older HTTP+SSE server, or another service?)", s, http.StatusText(s))
	}
	return fmt.Errorf("lro: proxy: the remote %s %s", p.cfg.Remote, why)
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

// connect returns the upstream client, dialing first if there is none.
// One dial runs at a time; other callers wait for it, or for their own
// context. No lock is held across the network.
func (p *Proxy) connect(ctx context.Context) (*client.Client, error) {
	for {
		p.mu.Lock()
		switch {
		case p.ctx.Err() != nil:
			p.mu.Unlock()
			return nil, errProxyClosed
		case p.up != nil:
			c := p.up
			p.mu.Unlock()
			return c, nil
		case p.dialing != nil:
			wait := p.dialing
			p.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		p.dialing = done
		p.mu.Unlock()

		c, tr, err := p.dial(ctx)
		p.mu.Lock()
		p.dialing = nil
		close(done)
		if err == nil && p.ctx.Err() != nil {
			c.Close()
			err = errProxyClosed
		}
		if err == nil {
			p.up, p.tr = c, tr
		}
		p.mu.Unlock()
		if err != nil {
			return nil, err
		}
		sctx, cancel := context.WithTimeout(ctx, dialTimeout)
		err = p.syncTools(sctx, c, tr, false)
		cancel()
		if err != nil {
			p.drop(c)
			return nil, err
		}
		p.log.Info("lro proxy: connected", "remote", p.cfg.Remote, "protocol", c.ProtocolVersion())
		return c, nil
	}
}

// dial connects and initializes a new upstream client, in the configured
// protocol version or, when none is, in the newest one both sides speak.
func (p *Proxy) dial(ctx context.Context) (*client.Client, *proxyTransport, error) {
	c, tr, err := p.dialVersion(ctx, p.cfg.ProtocolVersion)
	if p.cfg.ProtocolVersion != "" {
		return c, tr, err
	}
	if err == nil {
		// mcp-go settles on 2026-07-28 whenever server/discover answers,
		// even from a remote that lists only older versions there (the
		// official SDK's stateful transport): the first request tells.
		lctx, cancel := context.WithTimeout(ctx, dialTimeout)
		var res *mcp.ListToolsResult
		res, err = c.ListToolsByPage(lctx, mcp.ListToolsRequest{}) // one page tells
		cancel()
		if err == nil {
			tr.remember(res.Tools) // kept by mcp-go's client too
			return c, tr, nil
		}
		c.Close()
	}
	var unsupported mcp.UnsupportedProtocolVersionError
	if errors.As(err, &unsupported) && len(unsupported.Supported) > 0 {
		return p.dialVersion(ctx, slices.Max(unsupported.Supported))
	}
	return nil, nil, err
}

func (p *Proxy) dialVersion(ctx context.Context, version string) (*client.Client, *proxyTransport, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	topts := []transport.StreamableHTTPCOption{
		transport.WithHTTPBasicClient(p.httpc),
		transport.WithHTTPHeaders(p.cfg.Headers),
		transport.WithHTTPLogger(p.log),
	}
	copts := []client.ClientOption{client.WithClientCapabilities(mcp.ClientCapabilities{
		Experimental: map[string]any{proxywire.Capability: map[string]any{proxywire.Feature: true}},
	}), client.WithSamplingHandler(remoteRequests{p}), client.WithElicitationHandler(remoteRequests{p}), client.WithRootsHandler(remoteRequests{p})}
	if version != "" {
		copts = append(copts, client.WithProtocolVersion(version))
	}
	// The older protocol delivers list changes, and the remote's requests
	// made outside a call (server-everything asks for the roots after
	// initialized), on the standalone GET stream: without it they are
	// lost, and the remote waits for the answer. The transport opens it
	// only once it has settled on an older protocol, pinned or negotiated
	// (proxyTransport.RequiresLegacyProtocol).
	//lint:ignore SA1019 the stream is opened on the older protocol only
	topts = append(topts, transport.WithContinuousListening())
	t, err := transport.NewStreamableHTTP(p.cfg.Remote, topts...)
	if err != nil {
		return nil, nil, fmt.Errorf("lro: proxy: %w", err)
	}
	tr := newProxyTransport(t)
	tr.ask = p.askClient
	c := client.NewClient(tr, copts...)
	tr.close = func() { go c.Close() } // may send a DELETE to a remote that does not answer
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		switch n.Method {
		case mcp.MethodNotificationToolsListChanged:
			p.requestResync()
		case mcp.MethodNotificationSubscriptionsAcknowledged:
			// Changes made before the subscription took effect were not
			// announced: list once more now that they will be.
			p.requestResync()
		case string(mcp.MethodNotificationCancelled):
			tr.cancelIncoming(n.Params.AdditionalFields["requestId"])
		default:
			p.remoteNotification(n)
		}
	})
	// Start's context outlives the dial: it bounds the client's streams.
	if err := c.Start(p.ctx); err != nil {
		return nil, nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "lro-proxy", Version: "0.1.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, tr, nil
}

// drop forgets c after a transport failure, so the next call reconnects.
func (p *Proxy) drop(c *client.Client) {
	p.mu.Lock()
	current := p.up == c
	if current {
		p.up = nil
	}
	p.mu.Unlock()
	if current {
		go c.Close() // may send a DELETE to a remote that does not answer
	}
}

// requestResync asks syncLoop for a new tool list; a burst of
// notifications costs one listing.
func (p *Proxy) requestResync() {
	select {
	case p.resync <- struct{}{}:
	default:
	}
}

func (p *Proxy) syncLoop() {
	defer p.done.Done()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.resync:
		}
		p.mu.Lock()
		c, tr := p.up, p.tr
		p.mu.Unlock()
		if c == nil {
			continue // the next connection lists the tools anyway
		}
		ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
		if err := p.syncTools(ctx, c, tr, true); err != nil {
			p.log.Warn("lro proxy: relisting tools", "error", err)
		}
		cancel()
	}
}

// syncTools serves the remote's tools, with their schemas exactly as the
// remote sent them, alongside the proxy's own tools. Syncs are serialized,
// so an older listing never overwrites a newer one. A paced sync (one the
// remote asked for, by announcing a change, or the older protocol's
// periodic one) starts at least minResync after the last sync, so a remote
// that announces changes without pause is listed (and its clients
// notified) at most once in it; the sync of a new connection is not
// delayed, and the watcher paces reconnections. Only a change
// touches the front server, in one call, so clients get one
// tools/list_changed per change and none for a listing that changed
// nothing (a reconnection). A listing larger than MaxToolsBytes is
// refused: the error is logged, the listing served so far stays, and
// syncTools returns nil (the connection is fine).
func (p *Proxy) syncTools(ctx context.Context, c *client.Client, tr *proxyTransport, paced bool) error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if !paced {
		p.pace.mark()
	} else if err := p.pace.wait(ctx); err != nil {
		return err
	}
	pages, err := p.listTools(ctx, c, tr)
	if err == nil {
		err = p.applyListing(pages)
	}
	if err == nil {
		if ferr := p.syncFeatures(ctx, c); ferr != nil {
			p.log.Warn("lro proxy: listing the remote's prompts and resources", "remote", p.cfg.Remote, "error", proxyClip(ferr.Error(), p.lim.errText))
		}
	}
	var lim *RemoteLimitError
	if errors.As(err, &lim) {
		if p.refused == nil {
			p.log.Error("lro proxy: the remote's tool listing is too large; the proxy keeps serving the tools it had (raise Config.MaxToolsBytes, lro-proxy -max-tools-bytes)",
				"remote", p.cfg.Remote, "error", lim, "served", len(p.served))
		}
		p.refused = lim
		return nil
	}
	return err
}

// applyListing serves the tools of pages, the tools/list results of one
// listing as the remote sent them, in place of the remote tools served so
// far: the tools that changed are added or replaced, those gone deleted.
// Each tool keeps its schemas as the remote sent them (mcp.Tool drops what
// it does not model), but for the output schema of a tool whose results
// are offloaded, widened to admit the descriptor (see MemoryToolsOnly). A tool without a name, one mcp-go would refuse, or
// the remote's lro_extract when the proxy serves its own, is not served.
// Pages larger together than MaxToolsBytes, or that are not tools/list
// results, are refused with an error, and what was served stays. The
// caller holds syncMu.
func (p *Proxy) applyListing(pages []json.RawMessage) error {
	var size int64
	for _, page := range pages {
		size += int64(len(page))
	}
	if lim := p.overTools(size); lim != nil {
		return lim
	}
	var tools []mcp.Tool
	raws := map[string]json.RawMessage{}
	for _, page := range pages {
		// Decoded as mcp-go's client decodes it, and again for the JSON
		// of each tool.
		var res mcp.ListToolsResult
		if err := json.Unmarshal(page, &res); err != nil {
			return fmt.Errorf("lro: proxy: the remote's tools/list result: %w", err)
		}
		var raw struct {
			Tools []json.RawMessage `json:"tools"`
		}
		_ = json.Unmarshal(page, &raw)
		for _, t := range raw.Tools {
			var named struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(t, &named) == nil {
				raws[named.Name] = t
			}
		}
		tools = append(tools, res.Tools...)
	}
	next := make(map[string]string, len(tools))
	var order []string
	changed := map[string]server.ServerTool{}
	for _, t := range tools {
		switch {
		case t.Name == "":
			p.warnOnce("tool without name", "lro proxy: the remote lists a tool without a name; it is not served")
			continue
		case t.Name == lro.ExtractToolName && p.cfg.Extract:
			p.warnOnce("hidden "+lro.ExtractToolName, "lro proxy: the remote's own lro_extract is hidden by the local one")
			continue
		}
		raw := raws[t.Name]
		var schemas struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if raw != nil && json.Unmarshal(raw, &schemas) == nil {
			t.InputSchema, t.RawInputSchema = mcp.ToolInputSchema{}, schemas.InputSchema
			t.OutputSchema, t.RawOutputSchema = mcp.ToolOutputSchema{}, schemas.OutputSchema
		}
		// mcp-go's AddTools panics on these: the remote's mistake must not
		// stop the proxy.
		if err := mcp.ValidateParamHeaderAnnotations(&t); err != nil {
			p.warnOnce("invalid tool "+t.Name, "lro proxy: a remote tool is not served", "tool", t.Name, "error", err)
			continue
		}
		if raw == nil {
			raw, _ = json.Marshal(t)
		}
		next[t.Name] = string(raw)
		order = append(order, t.Name)
		if p.served[t.Name] != string(raw) {
			if p.generic(t.Name) {
				t = p.off.WidenTool(t)
			}
			changed[t.Name] = server.ServerTool{Tool: t, Handler: p.toolHandler(t.Name)}
		}
	}
	var gone []string
	for name := range p.served {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if err := p.serve(changed, gone); err != nil {
		return err
	}
	p.served, p.order, p.refused = next, order, nil
	return nil
}

// maxListPages bounds the pages of one listing, however small.
const maxListPages = 10_000

// listTools lists the remote's tools, page by page, and returns the
// tools/list results as the remote sent them. It stops with a
// *RemoteLimitError once they are larger together than MaxToolsBytes, and
// retires the connection once its client has kept (from this and earlier
// listings) more than twice that.
func (p *Proxy) listTools(ctx context.Context, c *client.Client, tr *proxyTransport) ([]json.RawMessage, error) {
	var pages []json.RawMessage
	var size int64
	seen := map[mcp.Cursor]bool{}
	req := mcp.ListToolsRequest{}
	defer func() {
		if p.lim.tools > 0 && tr.remember(nil) > 2*p.lim.tools {
			p.retire(c, tr)
		}
	}()
	for {
		page := &listPage{}
		res, err := c.ListToolsByPage(context.WithValue(ctx, listPageKey{}, page), req)
		if err != nil {
			return nil, err
		}
		tr.remember(res.Tools) // what mcp-go's client now keeps
		if page.result == nil {
			page.result, _ = json.Marshal(res) // not seen by the transport: cannot happen
		}
		size += int64(len(page.result))
		if lim := p.overTools(size); lim != nil {
			return nil, lim
		}
		pages = append(pages, page.result)
		switch {
		case res.NextCursor == "":
			return pages, nil
		case seen[res.NextCursor]:
			return nil, fmt.Errorf("lro: proxy: the remote's tool listing repeats the cursor %.100q", res.NextCursor)
		case len(pages) >= maxListPages:
			return nil, fmt.Errorf("lro: proxy: the remote's tool listing has more than %d pages", maxListPages)
		}
		seen[res.NextCursor] = true
		req.Params.Cursor = res.NextCursor
	}
}

// retire replaces the connection c: new calls and listings go to a new
// one, and c is closed once its calls in flight have ended. mcp-go's client
// keeps every tool it has ever listed; a remote that renames its tools
// would otherwise grow it without bound.
func (p *Proxy) retire(c *client.Client, tr *proxyTransport) {
	p.mu.Lock()
	if p.up == c {
		p.up = nil
	}
	p.mu.Unlock()
	p.retired++
	p.log.Info("lro proxy: replacing the connection to the remote, whose client kept too many tool definitions", "remote", p.cfg.Remote)
	tr.retire()
}

// serve adds (or replaces) the changed tools and deletes the gone ones,
// with one notification to the clients whatever the change.
func (p *Proxy) serve(changed map[string]server.ServerTool, gone []string) (err error) {
	// AddTools and SetTools panic on a name taken by a task tool of the
	// front server's owner: report it instead.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("lro: proxy: serving the remote's tools: %v", r)
		}
	}()
	add := slices.Collect(maps.Values(changed))
	switch {
	case len(gone) > 0 && len(add) > 0:
		// DeleteTools and AddTools would notify once each. SetTools
		// replaces them all: the proxy's own tools (and any its owner
		// added) are carried over.
		all := p.front.ListTools()
		for _, name := range gone {
			delete(all, name)
		}
		set := add
		for name, t := range all {
			if _, ok := changed[name]; !ok {
				set = append(set, *t)
			}
		}
		p.front.SetTools(set...)
	case len(gone) > 0:
		p.front.DeleteTools(gone...)
	case len(add) > 0:
		p.front.AddTools(add...)
	}
	return nil
}

// forward returns the handler that calls tool on the remote. The
// arguments go as the client sent them, byte for byte; the result comes
// back untouched for the offload middleware to judge.
func (p *Proxy) forward(tool string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
		defer cancel()
		fwd := mcp.CallToolRequest{Params: req.Params}
		fwd.Params.Name = tool
		fwd.Params.Meta = nil // the client's _meta is not the remote's business, but its progress token
		if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
			fwd.Params.Meta = &mcp.Meta{ProgressToken: m.ProgressToken}
		}
		var err error
		for attempt, retired := 0, 0; attempt < 2; attempt++ {
			var c *client.Client
			if c, err = p.connect(ctx); err != nil {
				break
			}
			tr, _ := c.GetTransport().(*proxyTransport)
			if !tr.begin() {
				err = errRetired
				if retired++; retired < 3 {
					attempt-- // retired meanwhile: not sent, the next connection takes it
				}
				continue
			}
			var res *mcp.CallToolResult
			rc := &rawCall{}
			res, err = c.CallTool(withRawCall(ctx, rc), fwd)
			tr.end()
			if err == nil {
				if rc.res != nil {
					res = rc.res // decoded once by the transport, not parsed
				}
				return p.judge(tool, res), nil
			}
			var lim *RemoteLimitError
			if ctx.Err() != nil || !isTransportError(err) || errors.As(err, &lim) || errors.As(err, new(*redirectError)) {
				break // this call's own deadline, the remote's answer, too much of one, or a redirect away
			}
			p.drop(c)
			if !neverSent(err) {
				break // it may have run: never send it twice
			}
		}
		return mcp.NewToolResultError(proxyClip(p.failure(ctx, tool, err), p.lim.errText)), nil
	}
}

// failure says why a forwarded call of tool failed with err.
func (p *Proxy) failure(ctx context.Context, tool string, err error) string {
	var lim *RemoteLimitError
	var redirect *redirectError
	switch {
	case errors.As(err, &redirect):
		return fmt.Sprintf("remote server %s, calling %s: %v", p.cfg.Remote, tool, redirect)
	case errors.As(err, &lim):
		return fmt.Sprintf("remote server %s sent a %s for %s larger than the proxy's limit of %s (%s); the proxy stopped reading it. Ask for less (fewer results, a narrower query), or raise the limit.",
			p.cfg.Remote, lim.what(), tool, proxySize(lim.Bytes), lim.Limit)
	case ctx.Err() != nil:
		return fmt.Sprintf("remote server %s did not answer %s within %s", p.cfg.Remote, tool, p.cfg.CallTimeout)
	case errors.As(err, new(*remoteHTTPError)):
		return fmt.Sprintf("remote server %s failed %s: %v", p.cfg.Remote, tool, err)
	case isTransportError(err) || errors.Is(err, errProxyClosed):
		return fmt.Sprintf("remote server %s is unreachable (%v); the proxy reconnects when it is back", p.cfg.Remote, err)
	default:
		return fmt.Sprintf("remote %s: %v", tool, err)
	}
}

// judge returns what the client gets of the remote's result of tool: a
// descriptor look-alike becomes a tool error that says so, and an error is
// cut to MaxErrorBytes (see [Proxy]). The rest goes on untouched, for the
// offload middleware to judge, with the structured content the remote
// left out for the proxy put back (see the root's middleware_proxy.go).
func (p *Proxy) judge(tool string, res *mcp.CallToolResult) *mcp.CallToolResult {
	dropServerInfo(res)
	restoreStructured(res)
	if why := lookalike(res); why != "" {
		p.warnOnce("lookalike "+tool, "lro proxy: a remote result looks like an offload descriptor; the client gets a tool error instead", "tool", tool, "why", why)
		return lookalikeResult(p.upstream(), tool, why, res, p.lim.errText)
	}
	if res.IsError {
		return boundError(res, p.lim.errText)
	}
	return res
}

// upstream names the server behind the proxy, for messages.
func (p *Proxy) upstream() string {
	if p.child != nil {
		return p.child.name
	}
	return p.cfg.Remote
}

// neverSent reports whether a call certainly did not reach the remote, so
// that retrying it on a new connection cannot run it twice.
func neverSent(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, transport.ErrSessionTerminated)
}

func isTransportError(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) || errors.Is(err, transport.ErrSessionTerminated)
}

// dropServerInfo removes the remote's identity from the result's _meta:
// the client talks to the proxy.
func dropServerInfo(res *mcp.CallToolResult) {
	if res.Meta != nil {
		delete(res.Meta.AdditionalFields, "io.modelcontextprotocol/serverInfo")
	}
}

// watch keeps a connection and, on protocol 2026-07-28, a subscription to
// tool list changes, reconnecting with backoff while the remote is down.
func (p *Proxy) watch() {
	defer p.done.Done()
	wait := 100 * time.Millisecond
	for {
		c, err := p.connect(p.ctx)
		if err == nil {
			start := time.Now()
			err = p.listen(c)
			if time.Since(start) >= proxyRetry {
				wait = 100 * time.Millisecond // a connection that lasted: not a remote that drops each one
			}
			if p.ctx.Err() == nil && err != nil && !errors.Is(err, errListenEnded) {
				p.log.Warn("lro proxy: lost the remote", "error", err)
				p.drop(c)
			}
		} else if p.ctx.Err() == nil {
			p.log.Debug("lro proxy: remote not reachable", "remote", p.cfg.Remote, "error", err)
		}
		select {
		case <-p.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, proxyRetry)
	}
}

// errListenEnded: the remote closed the subscription without an error; the
// connection is fine and the watcher subscribes again.
var errListenEnded = errors.New("lro proxy: the remote ended the subscription")

// listen blocks while the list-change stream of c is open. Connections on
// the older protocol get changes on their GET stream instead, which may
// open after a change; for them it lists the tools again now and then,
// which also tells that the remote is alive.
func (p *Proxy) listen(c *client.Client) error {
	if c.ProtocolVersion() < mcp.ProtocolVersion20260728 {
		select {
		case <-p.ctx.Done():
			return nil
		case <-time.After(proxyRetry):
		}
		p.mu.Lock()
		tr, current := p.tr, p.up == c
		p.mu.Unlock()
		if !current {
			return nil // replaced meanwhile; the watcher starts over
		}
		ctx, cancel := context.WithTimeout(p.ctx, proxyRetry)
		defer cancel()
		return p.syncTools(ctx, c, tr, true)
	}
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true}) }()
	var gone chan struct{}
	if tr, ok := c.GetTransport().(*proxyTransport); ok {
		gone = tr.gone
	}
	select {
	case <-p.ctx.Done():
		return nil
	case <-gone:
		return nil // retired: the watcher subscribes on the new connection
	case err := <-errc:
		if err == nil {
			err = errListenEnded
		}
		return err
	}
}
