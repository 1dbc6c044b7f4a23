package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro/internal/proxywire"
)

// proxyTransport is the streamable-HTTP transport of a proxy's upstream
// connection. It adds what mcp-go's typed client cannot send or keep:
//
//   - clientInfo.proxy = true, in initialize and in the per-request client
//     info of protocol 2026-07-28 (mcp.Implementation has no such field);
//   - the raw tools/list result, handed to the listing that asked for it
//     (see listPage), so that remote tools are re-served with their
//     schemas as sent (mcp.Tool drops what it does not model);
//   - an account of the tool definitions mcp-go's client keeps (it
//     remembers every tool it ever listed, for tools/call headers), so
//     that the proxy retires a connection whose client has kept too many
//     (see Proxy.retire);
//   - the result of a forwarded tools/call, decoded once and without maps
//     by its HTTP client, in place of the typed client's decodes (see
//     proxy_raw.go);
//   - the remote's answer to a request relayed as JSON, as it came (see
//     rawExchange);
//   - the standalone GET stream on the older protocol, negotiated or
//     pinned (see RequiresLegacyProtocol);
//   - a check of the remote's answer to server/discover, which mcp-go's
//     client takes for a server of 2026-07-28 whatever it holds (see
//     checkDiscover);
//   - cancellation both ways: a notifications/cancelled of a call whose
//     context ended (before protocol 2026-07-28, see cancelled), and a
//     context for each of the remote's requests that its
//     notifications/cancelled ends (see SetRequestHandler);
//   - what its HTTP client saw of each request (see proxy_limits.go): the
//     limit that stopped a response, which mcp-go does not report for an
//     event stream, and the HTTP status or content type of a failure,
//     which tells a misconfigured remote from one that is down.
type proxyTransport struct {
	*transport.StreamableHTTP

	mu         sync.Mutex
	known      map[string]int64 // what mcp-go's client keeps: tool name -> size
	knownBytes int64            // the sum of known
	calls      int              // forwarded calls and requests in flight
	retired    bool             // no new calls; closed when calls end
	gone       chan struct{}    // closed when retired
	close      func()           // closes the client (set by dialVersion)
	version    atomic.Value     // string: the protocol version in effect

	ask func(ctx context.Context, id string, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, bool, error) // see Proxy.askClient
	// shed drops a forwarded call's oversized _meta before it is decoded
	// (see Proxy.shedMeta).
	shed func(msg []byte) int

	incomingMu sync.Mutex
	incoming   map[string]context.CancelFunc // the remote's requests being answered, by the JSON of their ids
}

func newProxyTransport(t *transport.StreamableHTTP) *proxyTransport {
	return &proxyTransport{StreamableHTTP: t, known: map[string]int64{}, gone: make(chan struct{}), incoming: map[string]context.CancelFunc{}}
}

// knownToolOverhead is what mcp-go's client keeps of a tool besides its
// JSON: an mcp.Tool in a map, which holds the decoded schemas.
const knownToolOverhead = 512

// remember accounts for the tools of a listing page as mcp-go's client
// keeps them (by name, the last definition of each), and returns what it
// keeps in all.
func (p *proxyTransport) remember(tools []mcp.Tool) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range tools {
		size := knownToolOverhead + int64(len(t.Description)) + int64(len(t.RawInputSchema)) + int64(len(t.RawOutputSchema))
		if b, err := json.Marshal(t.InputSchema); err == nil {
			size += int64(len(b))
		}
		if t.OutputSchema.Type != "" {
			if b, err := json.Marshal(t.OutputSchema); err == nil {
				size += int64(len(b))
			}
		}
		p.knownBytes += size - p.known[t.Name]
		p.known[t.Name] = size
	}
	return p.knownBytes
}

// begin counts a forwarded call in flight, or reports false when the
// connection is retired.
func (p *proxyTransport) begin() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.retired {
		return false
	}
	p.calls++
	return true
}

// end counts a forwarded call done, closing a retired connection when it
// was the last.
func (p *proxyTransport) end() {
	p.mu.Lock()
	p.calls--
	last := p.retired && p.calls == 0
	p.mu.Unlock()
	if last {
		p.close()
	}
}

// retire takes no more calls, and closes the connection once those in
// flight have ended.
func (p *proxyTransport) retire() {
	p.mu.Lock()
	if p.retired {
		p.mu.Unlock()
		return
	}
	p.retired = true
	close(p.gone)
	idle := p.calls == 0
	p.mu.Unlock()
	if idle {
		p.close()
	}
}

// hold counts a request in flight, whether or not the connection is
// retired: a retired connection closes when the last one ends.
func (p *proxyTransport) hold() {
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
}

func (p *proxyTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	// A request sent on a connection that is being retired (the client
	// changed generation, see clientSpeaks) ends on it: a relayed listing
	// that took the connection just before is not cut off.
	p.hold()
	defer p.end()
	if ex, _ := ctx.Value(rawExchangeKey{}).(*rawExchange); ex != nil && ex.unknown && req.Method == string(mcp.MethodPromptsList) {
		req = p.asUnknown(req, ex)
	}
	req.Params = markProxy(req.Method, req.Params)
	call := &remoteCall{longLived: req.Method == string(mcp.MethodSubscriptionsListen)}
	rc, _ := ctx.Value(rawCallKey{}).(*rawCall)
	if rc != nil && req.Method == string(mcp.MethodToolsCall) {
		call.raw, call.shed = true, p.shed
		rc.res, rc.shed = nil, 0 // a step of a multi-round trip: only the last result counts
	}
	resp, err := p.StreamableHTTP.SendRequest(withRemoteCall(ctx, call), req)
	if err = call.outcome(err); err != nil {
		if ctx.Err() != nil {
			p.cancelled(ctx, req)
		}
		return nil, err
	}
	if ex, _ := ctx.Value(rawExchangeKey{}).(*rawExchange); ex != nil && resp != nil && req.Method == ex.method {
		ex.answer, ex.failed = resp.Result, resp.Error != nil
		if ex.failed {
			ex.answer, _ = json.Marshal(resp.Error)
		}
	}
	if resp == nil || resp.Error != nil {
		return resp, err
	}
	switch req.Method {
	case string(mcp.MethodServerDiscover):
		v, _ := p.version.Load().(string)
		if err := checkDiscover(resp.Result, v); err != nil {
			return nil, err
		}
	case string(mcp.MethodToolsList):
		if page, _ := ctx.Value(listPageKey{}).(*listPage); page != nil {
			page.result = resp.Result
		}
	case string(mcp.MethodToolsCall):
		// The stub is what mcp-go read of the response the HTTP
		// transport took: the result is the one it kept.
		if res := call.result(); res != nil && call.raw && bytes.Equal(resp.Result, rawStub) {
			rc.res = res
		}
		if call.raw {
			rc.shed = call.shedTokens()
		}
	}
	return resp, err
}

// RequiresLegacyProtocol reports false: the proxy's transport listens on
// the standalone GET stream (transport.WithContinuousListening), which
// mcp-go's transport opens only once it has settled on a protocol older
// than 2026-07-28, but it does not keep the connection from the newer
// one.
func (p *proxyTransport) RequiresLegacyProtocol() bool { return false }

// asUnknown returns req, the prompts/list that carries a request of a
// method mcp-go does not know (see rawExchange), as that request: its
// method, its params as the client sent them with the _meta mcp-go put
// on req (protocol 2026-07-28's client info), and the headers of that
// protocol for it.
func (p *proxyTransport) asUnknown(req transport.JSONRPCRequest, ex *rawExchange) transport.JSONRPCRequest {
	var params map[string]json.RawMessage
	if json.Unmarshal(ex.params, &params) != nil || params == nil {
		params = map[string]json.RawMessage{}
	}
	var carried map[string]json.RawMessage
	if b, err := json.Marshal(req.Params); err == nil && json.Unmarshal(b, &carried) == nil {
		if meta, ok := carried["_meta"]; ok {
			params["_meta"] = meta
		}
	}
	encoded, _ := json.Marshal(params)
	req.Method, req.Params = ex.method, json.RawMessage(encoded)
	v, _ := p.version.Load().(string)
	if std := mcp.StandardHeaders(v, mcp.MCPMethod(ex.method), encoded); len(std) > 0 {
		req.Header = req.Header.Clone()
		if req.Header == nil {
			req.Header = http.Header{}
		}
		for k, val := range std {
			req.Header.Set(k, val)
		}
	}
	return req
}

// SetProtocolVersion notes the protocol version in effect (mcp-go's client
// sets it once negotiated), and passes it on.
func (p *proxyTransport) SetProtocolVersion(version string) {
	p.version.Store(version)
	p.StreamableHTTP.SetProtocolVersion(version)
}

// cancelTimeout bounds the sending of a notifications/cancelled.
const cancelTimeout = 5 * time.Second

// cancelled tells the remote that req, whose context ended before its
// answer came (the client cancelled it, or it timed out), is cancelled.
// mcp-go's client sends nothing over HTTP: on protocol 2026-07-28 the end
// of the request's stream is the cancellation, but before it the remote
// goes on working for nobody unless told. The notification is sent off
// the caller's path and is best effort.
func (p *proxyTransport) cancelled(ctx context.Context, req transport.JSONRPCRequest) {
	v, _ := p.version.Load().(string)
	switch {
	case v == "" || v >= mcp.ProtocolVersion20260728:
		return // not negotiated yet (initialize is never cancelled), or the stream's end says it
	case req.Method == string(mcp.MethodInitialize), req.Method == string(mcp.MethodSubscriptionsListen):
		return
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationCancelled),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": req.ID, "reason": "lro-proxy: " + context.Cause(ctx).Error()}},
	}}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
		defer cancel()
		_ = p.StreamableHTTP.SendNotification(ctx, n)
	}()
}

// SetRequestHandler sets the handler of the remote's requests (sampling,
// elicitation, roots; relayed as they came when ask can, see
// Proxy.askClient), each with a context that the remote's
// notifications/cancelled of it ends (see cancelIncoming): mcp-go's
// client ends it only with the stream it came on, which the remote's call
// may keep open long after.
func (p *proxyTransport) SetRequestHandler(h transport.RequestHandler) {
	p.StreamableHTTP.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		key, err := json.Marshal(req.ID)
		if err != nil {
			return h(ctx, req)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		p.incomingMu.Lock()
		p.incoming[string(key)] = cancel
		p.incomingMu.Unlock()
		defer func() {
			p.incomingMu.Lock()
			delete(p.incoming, string(key))
			p.incomingMu.Unlock()
		}()
		if p.ask != nil {
			if resp, ok, err := p.ask(ctx, string(key), req); ok {
				return resp, err
			}
		}
		return h(ctx, req)
	})
}

// cancelIncoming ends the context of the remote's request id (as its
// notifications/cancelled names it), if it is being answered: the proxy's
// request to its client ends with it.
func (p *proxyTransport) cancelIncoming(id any) {
	key, err := json.Marshal(id)
	if err != nil {
		return
	}
	p.incomingMu.Lock()
	cancel := p.incoming[string(key)]
	p.incomingMu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// markProxy returns params with proxy: true in every client info it holds.
func markProxy(method string, params any) any {
	b, err := json.Marshal(params)
	if err != nil {
		return params
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return params
	}
	if method == string(mcp.MethodInitialize) {
		m["clientInfo"] = proxywire.WithProxyFlag(m["clientInfo"])
	}
	if raw, ok := m["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(raw, &meta) == nil && meta != nil {
			if ci, ok := meta[mcp.MetaKeyClientInfo]; ok {
				meta[mcp.MetaKeyClientInfo] = proxywire.WithProxyFlag(ci)
				m["_meta"], _ = json.Marshal(meta)
			}
		}
	}
	return m
}

// listPageKey is the context key of the *listPage of a tools/list request.
type listPageKey struct{}

// listPage receives the raw result of one tools/list request.
type listPage struct {
	result json.RawMessage
}
