package lro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
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

	mu    sync.Mutex
	up    *client.Client // nil while disconnected
	tr    *proxyTransport
	names []string // remote tools currently served

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// proxyRetry bounds the wait between reconnection attempts.
const proxyRetry = 5 * time.Second

// NewProxy returns a proxy of the remote server in cfg, offloading with off
// (its Middleware and, when registered, lro_extract). It connects at once
// and lists the remote tools; if the remote is not reachable yet, it keeps
// trying in the background and serves the tools when it comes up. Close
// the Proxy to stop it (off is not closed).
func NewProxy(off *Offloader, cfg ProxyConfig, opts ...server.ServerOption) (*Proxy, error) {
	if cfg.Remote == "" {
		return nil, errors.New("lro: proxy: no remote URL")
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 5 * time.Minute
	}
	p := &Proxy{cfg: cfg, off: off, log: cfg.Logger, done: make(chan struct{})}
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	all := append([]server.ServerOption{server.WithToolCapabilities(true), off.ServerOption()}, opts...)
	p.front = server.NewMCPServer("lro-proxy", "0.1.0", all...)
	if cfg.Extract {
		off.AddExtractTool(p.front)
	}
	if _, err := p.connect(p.ctx); err != nil {
		p.log.Warn("lro proxy: remote not reachable yet; retrying", "remote", cfg.Remote, "error", err)
	}
	go p.watch()
	return p, nil
}

// Server returns the local MCP server to serve to the client.
func (p *Proxy) Server() *server.MCPServer { return p.front }

// Close disconnects from the remote and stops reconnecting.
func (p *Proxy) Close() error {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.up != nil {
		p.up.Close()
		p.up = nil
	}
	return nil
}

// connect returns the upstream client, connecting and syncing the tool
// list first if there is none.
func (p *Proxy) connect(ctx context.Context) (*client.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.up != nil {
		return p.up, nil
	}
	topts := []transport.StreamableHTTPCOption{
		transport.WithHTTPHeaders(p.cfg.Headers),
		transport.WithHTTPLogger(p.log),
	}
	copts := []client.ClientOption{client.WithClientCapabilities(mcp.ClientCapabilities{
		Experimental: map[string]any{ProxyCapability: map[string]any{}},
	})}
	if p.cfg.ProtocolVersion != "" {
		copts = append(copts, client.WithProtocolVersion(p.cfg.ProtocolVersion))
		if p.cfg.ProtocolVersion < mcp.ProtocolVersion20260728 {
			// The older protocol delivers list changes on a GET stream.
			topts = append(topts, transport.WithContinuousListening())
		}
	}
	t, err := transport.NewStreamableHTTP(p.cfg.Remote, topts...)
	if err != nil {
		return nil, fmt.Errorf("lro: proxy: %w", err)
	}
	tr := newProxyTransport(t)
	c := client.NewClient(tr, copts...)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationToolsListChanged {
			go p.resync(c)
		}
	})
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "lro-proxy", Version: "0.1.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	if err := p.syncTools(ctx, c, tr); err != nil {
		c.Close()
		return nil, err
	}
	p.up, p.tr = c, tr
	p.log.Info("lro proxy: connected", "remote", p.cfg.Remote, "protocol", c.ProtocolVersion(), "tools", len(p.names))
	return c, nil
}

// drop forgets c after a transport failure, so the next call reconnects.
func (p *Proxy) drop(c *client.Client) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.up == c {
		p.up.Close()
		p.up = nil
	}
}

func (p *Proxy) resync(c *client.Client) {
	p.mu.Lock()
	current, tr := p.up == c, p.tr
	p.mu.Unlock()
	if !current {
		return
	}
	if err := p.syncTools(p.ctx, c, tr); err != nil {
		p.log.Warn("lro proxy: relisting tools", "error", err)
	}
}

// syncTools serves the remote's tools, with their schemas exactly as the
// remote sent them, alongside the proxy's own tools.
func (p *Proxy) syncTools(ctx context.Context, c *client.Client, tr *proxyTransport) error {
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return err
	}
	var tools []server.ServerTool
	var names []string
	for _, t := range res.Tools {
		if t.Name == ExtractToolName && p.off.native.Load() {
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
	p.front.DeleteTools(p.names...)
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
		var lastErr error
		for attempt := 0; attempt < 2; attempt++ {
			c, err := p.connect(ctx)
			if err != nil {
				lastErr = err
				break
			}
			res, err := c.CallTool(ctx, fwd)
			if err == nil {
				dropServerInfo(res)
				return res, nil
			}
			lastErr = err
			if !isTransportError(err) {
				return mcp.NewToolResultError(fmt.Sprintf("remote %s: %v", tool, err)), nil
			}
			// The remote went away or restarted: reconnect once and retry.
			p.drop(c)
		}
		if errors.Is(lastErr, context.DeadlineExceeded) {
			return mcp.NewToolResultError(fmt.Sprintf("remote server %s did not answer %s within %s", p.cfg.Remote, tool, p.cfg.CallTimeout)), nil
		}
		return mcp.NewToolResultError(fmt.Sprintf("remote server %s is unreachable (%v); the proxy reconnects when it is back", p.cfg.Remote, lastErr)), nil
	}
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
	defer close(p.done)
	wait := 100 * time.Millisecond
	for {
		c, err := p.connect(p.ctx)
		if err == nil {
			wait = 100 * time.Millisecond
			err = p.listen(c)
			if p.ctx.Err() == nil && err != nil {
				p.log.Warn("lro proxy: lost the remote", "error", err)
				p.drop(c)
			}
		}
		select {
		case <-p.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, proxyRetry)
	}
}

// listen blocks while the list-change stream of c is open. Connections on
// the older protocol get changes on their GET stream instead; for them it
// checks the remote is alive now and then.
func (p *Proxy) listen(c *client.Client) error {
	if c.ProtocolVersion() < mcp.ProtocolVersion20260728 {
		select {
		case <-p.ctx.Done():
			return nil
		case <-time.After(proxyRetry):
		}
		ctx, cancel := context.WithTimeout(p.ctx, proxyRetry)
		defer cancel()
		_, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		return err
	}
	errc := make(chan error, 1)
	stop, err := c.ListenAsync(p.ctx, mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) { errc <- err })
	if err != nil {
		return err
	}
	defer stop()
	select {
	case <-p.ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}
