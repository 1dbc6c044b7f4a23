package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// What the proxy negotiates with the remote: the generation it speaks,
// which follows the client's, and what it takes for an answer to
// server/discover.
//
// The protocol generation spoken to the remote follows the client's. The
// two generations differ in how a server asks its client for something
// during a call: before 2026-07-28 it sends a request of its own
// (sampling/createMessage, elicitation/create, roots/list) on the call's
// stream; from 2026-07-28 on it returns an input_required result whose
// input requests the client answers by calling again (SEP-2322), and a
// server may refuse requests of its own there (mcp-go does). mcp-go's
// client turns input requests into calls of the proxy's handlers, which
// ask the proxy's client with requests of its own, so a 2026-07-28 remote
// is served to a client of either generation; but a remote that asks by
// requests of its own must be spoken to in the older generation, which a
// client of 2025-11-25 also speaks. So the proxy speaks to the remote in
// the newest protocol both speak until a client speaks an older one, and
// then in the client's: the connection in the newer one is retired (its
// calls in flight end on it) and the next is made in the client's
// version. A client of 2026-07-28 that comes next turns the proxy back to
// the newest. A pinned Config.ProtocolVersion is kept whatever the
// client speaks.

// followClient has the upstream generation follow the client's: its
// initialize, and the protocol version of each of its requests.
func (p *Proxy) followClient() {
	if p.cfg.ProtocolVersion != "" {
		return // pinned
	}
	h := p.hooks()
	h.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		p.clientSpeaks(res.ProtocolVersion)
	})
	h.AddBeforeAny(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any) {
		if method != mcp.MethodInitialize { // a session's earlier version, if any: the hook above says
			p.clientSpeaks(server.RequestProtocolVersion(ctx))
		}
	})
}

// clientSpeaks notes that the client speaks protocol version v, and
// retires the connection when it is not in the generation v asks for.
func (p *Proxy) clientSpeaks(v string) {
	if v == "" {
		return
	}
	p.mu.Lock()
	if p.clientVersion == v {
		p.mu.Unlock()
		return
	}
	p.clientVersion = v
	c, tr := p.up, p.tr
	stale := c != nil && !fits(c.ProtocolVersion(), p.wantLocked())
	if stale {
		p.up = nil
	}
	p.mu.Unlock()
	if stale {
		p.log.Info("lro proxy: reconnecting to the remote in the client's protocol generation", "remote", p.cfg.Remote, "client", v, "was", c.ProtocolVersion())
		tr.retire()
	}
}

// wantLocked returns the protocol version to ask of the remote: the pinned
// one, the client's when it is older than 2026-07-28, or "" for the newest
// both sides speak. The caller holds p.mu.
func (p *Proxy) wantLocked() string {
	switch v := p.clientVersion; {
	case p.cfg.ProtocolVersion != "":
		return p.cfg.ProtocolVersion
	case v != "" && !mcp.IsModernProtocol(v):
		return v
	}
	return ""
}

// fits reports whether a connection in protocol version have serves a
// client for which the proxy wants want (see wantLocked).
func fits(have, want string) bool {
	if want == "" {
		return mcp.IsModernProtocol(have)
	}
	return !mcp.IsModernProtocol(have) && have <= want
}

// answered reports whether err, of a dial in an older version, is the
// remote's answer (it refused the version or initialize), not a failure
// to reach it: the newest version is tried then.
func answered(err error) bool {
	var he *remoteHTTPError
	if errors.As(err, &he) {
		return he.status >= 400 && he.status < 500 && he.status != 401 && he.status != 403 && he.status != 404 && he.status != 408 && he.status != 429
	}
	return !isTransportError(err) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}

// checkDiscover returns what is wrong with result, a remote's answer to
// server/discover asked in protocol version asked, or nil. The
// specification of 2026-07-28 has the server answer with the protocol
// versions it supports (supportedVersions, a list of strings) and its
// capabilities (an object), beside its identity in _meta and optional
// instructions and cache hints; mcp-go's client takes any answer that
// decodes, even {} (the conformance suite's scenario servers answer every
// method they do not know so), for a server of 2026-07-28. The error
// makes mcp-go's client fall back to initialize; an answer that does not
// list the version asked for is mcp.UnsupportedProtocolVersionError, with
// which it tries another version it lists, or falls back.
func checkDiscover(result json.RawMessage, asked string) error {
	var r struct {
		SupportedVersions *[]string                  `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("lro: proxy: the remote's answer to server/discover is not what the specification says: %w", err)
	}
	switch {
	case r.SupportedVersions == nil || len(*r.SupportedVersions) == 0:
		return errors.New("lro: proxy: the remote's answer to server/discover lists no supportedVersions: taken for a server older than 2026-07-28")
	case slices.Contains(*r.SupportedVersions, ""):
		return errors.New("lro: proxy: the remote's answer to server/discover lists an empty version")
	case r.Capabilities == nil:
		return errors.New("lro: proxy: the remote's answer to server/discover has no capabilities object: taken for a server older than 2026-07-28")
	case asked != "" && !slices.Contains(*r.SupportedVersions, asked):
		return mcp.UnsupportedProtocolVersionError{Version: asked, Supported: *r.SupportedVersions}
	}
	return nil
}
