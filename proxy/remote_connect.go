package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
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

	"github.com/mcplro/lro/internal/proxywire"
)

// The connection to a remote: its URL checked, the first connection's
// answer told apart from a remote merely down, one dial at a time in the
// newest protocol both sides speak or the client's older one (see
// remote_negotiate.go), and a watcher that keeps the
// connection (and, on protocol 2026-07-28, its subscription to tool list
// changes), reconnecting with backoff while the remote is down.

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
		why = credentialsWanted(p.cfg.Remote, he, p.sentAuthorization())
	case s == http.StatusNotFound:
		why = "answered HTTP 404 Not Found: is the path right? (streamable-HTTP MCP endpoints are often at /mcp)"
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		return nil
	default:
		why = fmt.Sprintf("answered HTTP %d %s: it is not a streamable-HTTP MCP endpoint (an older HTTP+SSE server, or another service?)", s, http.StatusText(s))
	}
	return fmt.Errorf("lro: proxy: the remote %s %s", p.cfg.Remote, why)
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
		want := p.wantLocked()
		p.mu.Unlock()

		c, tr, err := p.dial(ctx, want)
		p.mu.Lock()
		p.dialing = nil
		close(done)
		if err == nil && p.ctx.Err() != nil {
			c.Close()
			err = errProxyClosed
		}
		if err == nil && p.wantLocked() != want {
			// The client changed generation meanwhile (see clientSpeaks).
			p.mu.Unlock()
			go c.Close()
			continue
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

// dial connects and initializes a new upstream client, in the protocol
// version want (see wantLocked): the configured one; the client's older
// one, or when the remote refuses it the newest; or, when want is empty,
// the newest one both sides speak.
func (p *Proxy) dial(ctx context.Context, want string) (*client.Client, *proxyTransport, error) {
	if want != "" {
		c, tr, err := p.dialVersion(ctx, want)
		if err == nil || p.cfg.ProtocolVersion != "" || !answered(err) {
			return c, tr, err
		}
		p.log.Info("lro proxy: the remote refused the client's protocol version; trying the newest", "remote", p.cfg.Remote, "version", want, "error", proxyClip(err.Error(), p.lim.errText))
	}
	c, tr, err := p.dialVersion(ctx, "")
	if err == nil {
		// An answer to server/discover that passed checkDiscover may
		// still come from a remote that refuses the protocol's requests:
		// the first request tells.
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
	tr.shed = p.shedMeta
	c := client.NewClient(tr, copts...)
	// Closed once, though a retired connection's last request may end
	// after it was closed idle; Close may send a DELETE to a remote that
	// does not answer.
	var closeOnce sync.Once
	tr.close = func() { closeOnce.Do(func() { go c.Close() }) }
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

// neverSent reports whether a call certainly did not reach the remote, so
// that retrying it on a new connection cannot run it twice.
func neverSent(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, transport.ErrSessionTerminated)
}

func isTransportError(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) || errors.Is(err, transport.ErrSessionTerminated)
}
