package lro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ProxyConfig configures a [Proxy].
type ProxyConfig struct {
	// Remote is the URL of the remote streamable-HTTP MCP server,
	// e.g. https://memory.example.com/mcp.
	Remote string
	// Headers are sent with every request to the remote, e.g. an
	// Authorization header.
	Headers map[string]string
	// ProtocolVersion pins the protocol spoken to the remote. Empty means
	// negotiate: 2026-07-28 first, then 2025-11-25 with initialize.
	ProtocolVersion string
	// CallTimeout bounds one forwarded call. Zero means 5 minutes.
	CallTimeout time.Duration
	// Logger receives connection events. Nil means none. A proxy serving
	// stdio must not log to stdout.
	Logger *slog.Logger
	// Extract serves the lro_extract tool locally (see
	// [Offloader.AddExtractTool]), hiding a remote tool of that name.
	Extract bool
}

// A Proxy is a local MCP server that forwards every tool call to a remote
// streamable-HTTP server and offloads the results on the local disk, where
// the model's shell can reach them (the specification's Local LRO Proxy).
// It announces itself to the remote as a proxy, so the remote returns full
// results instead of offloading them on its own disk.
//
// Serve [Proxy.Server] on stdio with server.ServeStdio. The proxy holds no
// state beyond its files, which its Offloader's janitor deletes.
type Proxy struct {
	cfg   ProxyConfig
	off   *Offloader
	front *server.MCPServer
	log   *slog.Logger

	mu      sync.Mutex
	up      *client.Client // nil while disconnected
	tr      *proxyTransport
	dialing chan struct{} // closed when the dial in progress ends

	syncMu sync.Mutex // serializes tool list syncs
	names  []string   // remote tools currently served
	resync chan struct{}

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	done   sync.WaitGroup
}

const (
	// proxyRetry bounds the wait between reconnection attempts.
	proxyRetry = 5 * time.Second
	// dialTimeout bounds connecting to the remote and listing its tools.
	dialTimeout = 30 * time.Second
)

// errProxyClosed is returned for calls that arrive after Close.
var errProxyClosed = errors.New("lro: proxy is closed")

// NewProxy returns a proxy of the remote server in cfg, offloading with off
// (its Middleware and, with cfg.Extract, lro_extract). It connects and
// lists the remote's tools before it returns (within 30 seconds); if the
// remote is not reachable yet, it keeps trying in the background and serves
// the tools when it comes up. Close the Proxy to stop it (off is not
// closed).
func NewProxy(off *Offloader, cfg ProxyConfig, opts ...server.ServerOption) (*Proxy, error) {
	if cfg.Remote == "" {
		return nil, errors.New("lro: proxy: no remote URL")
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 5 * time.Minute
	}
	p := &Proxy{cfg: cfg, off: off, log: cfg.Logger, resync: make(chan struct{}, 1)}
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	all := append([]server.ServerOption{server.WithToolCapabilities(true), server.WithRecovery(), off.ServerOption()}, opts...)
	p.front = server.NewMCPServer("lro-proxy", "0.1.0", all...)
	if cfg.Extract {
		off.AddExtractTool(p.front)
	}
	// A client lists the tools as soon as it starts: have them by then
	// when the remote is up, and follow them later when it is not.
	if _, err := p.connect(p.ctx); err != nil {
		p.log.Warn("lro proxy: remote not reachable yet; retrying", "remote", cfg.Remote, "error", err)
	}
	p.done.Add(2)
	go p.watch()
	go p.syncLoop()
	return p, nil
}

// Server returns the local MCP server to serve to the client.
func (p *Proxy) Server() *server.MCPServer { return p.front }

// Close disconnects from the remote and stops reconnecting.
func (p *Proxy) Close() error {
	p.cancel()
	p.done.Wait()
	p.mu.Lock()
	c := p.up
	p.up = nil
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
	return nil
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
		err = p.syncTools(sctx, c, tr)
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
		_, err = c.ListTools(lctx, mcp.ListToolsRequest{})
		cancel()
		if err == nil {
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
		transport.WithHTTPHeaders(p.cfg.Headers),
		transport.WithHTTPLogger(p.log),
	}
	copts := []client.ClientOption{client.WithClientCapabilities(mcp.ClientCapabilities{
		Experimental: map[string]any{ProxyCapability: map[string]any{}},
	})}
	if version != "" {
		copts = append(copts, client.WithProtocolVersion(version))
		if version < mcp.ProtocolVersion20260728 {
			// The older protocol delivers list changes on a GET stream;
			// the option is deprecated only for the newer one.
			//lint:ignore SA1019 pinned to a protocol that has the GET stream
			topts = append(topts, transport.WithContinuousListening())
		}
	}
	t, err := transport.NewStreamableHTTP(p.cfg.Remote, topts...)
	if err != nil {
		return nil, nil, fmt.Errorf("lro: proxy: %w", err)
	}
	tr := newProxyTransport(t)
	c := client.NewClient(tr, copts...)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		switch n.Method {
		case mcp.MethodNotificationToolsListChanged:
			p.requestResync()
		case mcp.MethodNotificationSubscriptionsAcknowledged:
			// Changes made before the subscription took effect were not
			// announced: list once more now that they will be.
			p.requestResync()
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
		if err := p.syncTools(ctx, c, tr); err != nil {
			p.log.Warn("lro proxy: relisting tools", "error", err)
		}
		cancel()
	}
}

// syncTools serves the remote's tools, with their schemas exactly as the
// remote sent them, alongside the proxy's own tools. Syncs are serialized,
// so an older listing never overwrites a newer one.
func (p *Proxy) syncTools(ctx context.Context, c *client.Client, tr *proxyTransport) error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return err
	}
	var tools []server.ServerTool
	var names []string
	for _, t := range res.Tools {
		if t.Name == ExtractToolName && p.cfg.Extract {
			p.log.Warn("lro proxy: the remote's own lro_extract is hidden by the local one")
			continue
		}
		var schemas struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if raw := tr.rawTool(t.Name); raw != nil && json.Unmarshal(raw, &schemas) == nil {
			t.InputSchema, t.RawInputSchema = mcp.ToolInputSchema{}, schemas.InputSchema
			t.OutputSchema, t.RawOutputSchema = mcp.ToolOutputSchema{}, schemas.OutputSchema
		}
		tools = append(tools, server.ServerTool{Tool: t, Handler: p.forward(t.Name)})
		names = append(names, t.Name)
	}
	var gone []string
	for _, n := range p.names {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	p.front.DeleteTools(gone...)
	p.front.AddTools(tools...)
	p.names = names
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
		fwd.Params.Meta = nil // the client's _meta is not the remote's business
		var err error
		for attempt := 0; attempt < 2; attempt++ {
			var c *client.Client
			if c, err = p.connect(ctx); err != nil {
				break
			}
			var res *mcp.CallToolResult
			if res, err = c.CallTool(ctx, fwd); err == nil {
				dropServerInfo(res)
				return res, nil
			}
			if ctx.Err() != nil || !isTransportError(err) {
				break // this call's own deadline, or the remote's answer
			}
			p.drop(c)
			if !neverSent(err) {
				break // it may have run: never send it twice
			}
		}
		switch {
		case ctx.Err() != nil:
			return mcp.NewToolResultError(fmt.Sprintf("remote server %s did not answer %s within %s", p.cfg.Remote, tool, p.cfg.CallTimeout)), nil
		case isTransportError(err) || errors.Is(err, errProxyClosed):
			return mcp.NewToolResultError(fmt.Sprintf("remote server %s is unreachable (%v); the proxy reconnects when it is back", p.cfg.Remote, err)), nil
		default:
			return mcp.NewToolResultError(fmt.Sprintf("remote %s: %v", tool, err)), nil
		}
	}
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
			wait = 100 * time.Millisecond
			err = p.listen(c)
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
		return p.syncTools(ctx, c, tr)
	}
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true}) }()
	select {
	case <-p.ctx.Done():
		return nil
	case err := <-errc:
		if err == nil {
			err = errListenEnded
		}
		return err
	}
}
