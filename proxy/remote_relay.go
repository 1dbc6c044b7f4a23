package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/mcpgo"
)

// A remote's prompts, resources, templates, completions and subscriptions
// are relayed as JSON, as the remote sent them, by [Proxy.Serve]: the
// local mcp-go server would answer from mcp-go's types, which drop what
// they do not model ("required": false on a prompt argument, "hasMore":
// false, _meta, icons, fields of later versions of the specification).
// Serve reads the client's messages line by line; the requests below go
// to the remote with mcp-go's typed client, whose transport keeps the
// remote's answer as it came (rawExchange), and that answer goes back to
// the client with the client's id. Everything else goes on to the local
// server: initialize, the tools, the lro:// resources, logging, the
// client's answers and notifications. The proxy steps in on the last
// page of the resource and template listings only, where its own lro://
// items are added, and on a listing the remote lacks ("Method not
// found"), which is then the proxy's own.

// rawMethods are the methods of the client that are relayed as JSON.
var rawMethods = map[string]bool{
	string(mcp.MethodPromptsList):            true,
	string(mcp.MethodPromptsGet):             true,
	string(mcp.MethodResourcesList):          true,
	string(mcp.MethodResourcesTemplatesList): true,
	string(mcp.MethodResourcesRead):          true,
	string(mcp.MethodResourcesSubscribe):     true,
	string(mcp.MethodResourcesUnsubscribe):   true,
	string(mcp.MethodCompletionComplete):     true,
}

// rawExchangeKey is the context key of the *rawExchange of a request.
type rawExchangeKey struct{}

// rawExchange receives the remote's answer to a request of method, as it
// came (see proxyTransport.SendRequest).
type rawExchange struct {
	method string
	answer json.RawMessage // the result or the error, as the remote sent it
	failed bool            // answer is an error

	// unknown is set for a method mcp-go does not know, which no typed
	// method of its client sends: the request goes as a prompts/list,
	// whose method and params the transport replaces with method and
	// params (see proxyTransport.SendRequest).
	unknown bool
	params  json.RawMessage
}

// knownMethods are the methods of requests mcp-go knows: a request of
// any other method (one of a later version of the specification, or a
// server's own) is relayed to the remote as it came (relayUnknown).
var knownMethods = map[string]bool{}

func init() {
	for _, m := range []mcp.MCPMethod{mcp.MethodInitialize, mcp.MethodPing, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList,
		mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, mcp.MethodPromptsList, mcp.MethodPromptsGet,
		mcp.MethodToolsList, mcp.MethodToolsCall, mcp.MethodSetLogLevel, mcp.MethodElicitationCreate, mcp.MethodListRoots,
		mcp.MethodTasksGet, mcp.MethodTasksList, mcp.MethodTasksResult, mcp.MethodTasksCancel, mcp.MethodCompletionComplete,
		mcp.MethodServerDiscover, mcp.MethodSubscriptionsListen, mcp.MethodSamplingCreateMessage} {
		knownMethods[string(m)] = true
	}
}

// remoteRelay is one Serve of a remote's client.
type remoteRelay struct {
	p   *Proxy
	out *lineWriter
	sem chan struct{} // bounds the requests relayed at once
	wg  sync.WaitGroup

	mu       sync.Mutex
	inFlight map[string]*localRequest // the requests relayed, by the JSON of their ids

	asks clientAsks // the remote's requests sent to the client (see remote_asks.go)
}

// lineWriter writes each message to w in one call, one at a time: the
// local server and the relayed answers share the client's output.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// writeLine writes line and its newline.
func (l *lineWriter) writeLine(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf, _ = writeLine(l.w, l.buf, line)
}

// serveRemote is Serve for a remote.
func (p *Proxy) serveRemote(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rr := &remoteRelay{p: p, out: &lineWriter{w: out}, sem: make(chan struct{}, maxLocalRequests), inFlight: map[string]*localRequest{}}
	p.relayMu.Lock()
	p.relay = rr
	p.relayMu.Unlock()
	defer func() {
		p.relayMu.Lock()
		if p.relay == rr {
			p.relay = nil
		}
		p.relayMu.Unlock()
	}()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(rr.readClient(ctx, in, pw)) }()
	ss := server.NewStdioServer(p.front)
	server.WithWorkerPoolSize(16)(ss)
	// The requests the local server answers (lro:// reads, ping, ...)
	// take places of the admission that bounds mcpgo.ServeStdio: a client
	// that never reads holds at most mcpgo.MaxStdioRequests answers.
	gr, gw := admit.Stdio(ctx, pr, rr.out, mcpgo.MaxStdioRequests)
	err := ss.Listen(ctx, gr, gw)
	cancel()
	rr.wg.Wait()
	return err
}

// readClient reads the client's messages: the requests of rawMethods it
// relays, the rest it passes to the local server on front.
func (rr *remoteRelay) readClient(ctx context.Context, in io.Reader, front io.Writer) error {
	lr := newLineReader(in, max(rr.p.lim.response, 0))
	for {
		line, long, err := lr.next()
		if err != nil {
			return err // io.EOF: the local server ends too
		}
		if long != nil {
			if id := long.id(); id != nil {
				rr.out.writeLine(errorMessage(id, mcp.INVALID_REQUEST, fmt.Sprintf("lro-proxy: the request is larger than the proxy's limit of %s (lro-proxy -max-response-bytes)", proxySize(rr.p.lim.response)), rr.p.lim.errText))
			}
			continue
		}
		id, method, params, ok := peekHeader(line)
		h := header{ID: id, Method: methodName(method), Params: params}
		switch {
		case ok && h.isRequest() && rr.relays(&h):
			if !rr.start(ctx, &h, rr.relay) {
				return ctx.Err()
			}
			continue
		case ok && h.isRequest() && !knownMethods[h.Method]:
			if !rr.start(ctx, &h, rr.relayUnknown) {
				return ctx.Err()
			}
			continue
		case ok && h.isRequest() && h.Method == string(mcp.MethodToolsList):
			if !rr.start(ctx, &h, rr.toolsListing) {
				return ctx.Err()
			}
			continue
		case ok && h.Method == string(mcp.MethodNotificationCancelled):
			rr.cancelled(h.Params)
		case ok && h.Method == "" && bytes.HasPrefix(h.ID, []byte(askPrefix)) && rr.answered(h.ID, line):
			continue // the client's answer to a request of the remote
		}
		if _, err := front.Write(append(line, '\n')); err != nil {
			return err
		}
	}
}

// relays reports whether the request h is relayed as JSON: a method of
// rawMethods, of a capability the remote declares, but a read of the
// proxy's own lro:// resources.
func (rr *remoteRelay) relays(h *header) bool {
	if !rawMethods[h.Method] {
		return false
	}
	if h.Method == string(mcp.MethodResourcesRead) {
		var params struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(h.Params, &params) == nil && strings.HasPrefix(params.URI, "lro://") {
			return false
		}
	}
	rr.p.mu.Lock()
	c := rr.p.up
	rr.p.mu.Unlock()
	if c == nil {
		return true // the relay connects, or says why it cannot
	}
	caps := c.GetServerCapabilities()
	switch {
	case strings.HasPrefix(h.Method, "prompts/"):
		return caps.Prompts != nil
	case strings.HasPrefix(h.Method, "resources/"):
		return caps.Resources != nil
	default:
		return caps.Completions != nil
	}
}

// start answers the request h with answer, on a goroutine of its own,
// once one of maxLocalRequests places is free; it reports false when ctx
// ended first.
func (rr *remoteRelay) start(ctx context.Context, h *header, answer func(context.Context, *header) []byte) bool {
	select {
	case rr.sem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	rctx, cancel := context.WithTimeout(ctx, rr.p.cfg.CallTimeout)
	lr := &localRequest{cancel: cancel}
	key := string(h.ID)
	rr.mu.Lock()
	rr.inFlight[key] = lr
	rr.mu.Unlock()
	rr.wg.Add(1)
	go func() {
		defer rr.wg.Done()
		defer func() { <-rr.sem }()
		defer cancel()
		msg := answer(rctx, h)
		rr.mu.Lock()
		delete(rr.inFlight, key)
		cancelled := lr.cancelled
		rr.mu.Unlock()
		if !cancelled {
			rr.out.writeLine(msg)
		}
	}()
	return true
}

// cancelled ends the relayed request that the client's
// notifications/cancelled (params) names: it gets no answer.
func (rr *remoteRelay) cancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if lr := rr.inFlight[string(p.RequestID)]; lr != nil {
		lr.cancelled = true
		lr.cancel()
	}
}

// relay sends the request h to the remote and returns the message that
// answers the client: the remote's answer as it came, with the client's
// id.
func (rr *remoteRelay) relay(ctx context.Context, h *header) []byte {
	p := rr.p
	c, err := p.connect(ctx)
	if err != nil {
		return errorMessage(h.ID, mcp.INTERNAL_ERROR, fmt.Sprintf("lro-proxy: the remote %s: %v", p.cfg.Remote, err), p.lim.errText)
	}
	ex := &rawExchange{method: h.Method}
	err = sendTyped(context.WithValue(ctx, rawExchangeKey{}, ex), c, h)
	switch {
	case ex.answer == nil && err != nil:
		return errorMessage(h.ID, mcp.INTERNAL_ERROR, p.failure(ctx, h.Method, err), p.lim.errText)
	case ex.answer == nil:
		ex.answer = json.RawMessage(`{}`) // not sent: a subscription on protocol 2026-07-28 (see Client.Subscribe)
	case ex.failed && methodNotFound(ex.answer):
		if own := rr.ownListing(h.Method, nil, true, h.Params); own != nil {
			return resultMessage(h.ID, own)
		}
	case !ex.failed:
		ex.answer = rr.ownListing(h.Method, ex.answer, false, h.Params)
	}
	if ex.failed {
		return p.boundErrorMessage(h.ID, ex.answer)
	}
	answer, err := p.boundResult(ctx, h.Method, h.Params, ex.answer)
	if err != nil {
		return errorMessage(h.ID, mcp.INTERNAL_ERROR, err.Error(), 0)
	}
	return resultMessage(h.ID, answer)
}

// toolsListing answers tools/list: the remote's tools as it listed them,
// in its order and with what mcp-go's types do not model, but for the
// output schemas the proxy serves (widened to admit the descriptor), then
// the proxy's own tools (lro_extract). The listing comes whole: the proxy
// holds it.
func (rr *remoteRelay) toolsListing(ctx context.Context, h *header) []byte {
	p := rr.p
	local := p.front.HandleMessage(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"tools/list"}`, h.ID))
	b, err := json.Marshal(local)
	var resp struct {
		Result struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err != nil || json.Unmarshal(b, &resp) != nil {
		return b // an error of the local server
	}
	byName := make(map[string]map[string]json.RawMessage, len(resp.Result.Tools))
	var names []string
	for _, t := range resp.Result.Tools {
		var name string
		_ = json.Unmarshal(t["name"], &name)
		byName[name] = t
		names = append(names, name)
	}
	p.syncMu.Lock()
	order, served := p.order, p.served
	p.syncMu.Unlock()
	tools := make([]json.RawMessage, 0, len(names))
	for _, name := range order {
		lt, ok := byName[name]
		if !ok {
			continue // served no more, or not yet
		}
		delete(byName, name)
		var t map[string]json.RawMessage
		if json.Unmarshal([]byte(served[name]), &t) != nil || t == nil {
			t = lt // cannot happen: served holds the JSON of an object
		}
		if os, ok := lt["outputSchema"]; ok {
			t["outputSchema"] = os
		}
		raw, _ := json.Marshal(t)
		tools = append(tools, raw)
	}
	for _, name := range names {
		if t, ok := byName[name]; ok { // the proxy's own
			raw, _ := json.Marshal(t)
			tools = append(tools, raw)
		}
	}
	out, _ := json.Marshal(map[string]any{"tools": tools})
	return resultMessage(h.ID, out)
}

// relayUnknown relays the request h, of a method mcp-go does not know,
// to the remote, and returns the message that answers the client: the
// remote's answer as it came, with the client's id.
func (rr *remoteRelay) relayUnknown(ctx context.Context, h *header) []byte {
	p := rr.p
	c, err := p.connect(ctx)
	if err != nil {
		return errorMessage(h.ID, mcp.INTERNAL_ERROR, fmt.Sprintf("lro-proxy: the remote %s: %v", p.cfg.Remote, err), p.lim.errText)
	}
	ex := &rawExchange{method: h.Method, unknown: true, params: h.Params}
	_, err = c.ListPromptsByPage(context.WithValue(ctx, rawExchangeKey{}, ex), mcp.ListPromptsRequest{})
	switch {
	case ex.answer == nil && err != nil:
		return errorMessage(h.ID, mcp.INTERNAL_ERROR, p.failure(ctx, h.Method, err), p.lim.errText)
	case ex.answer == nil:
		return errorMessage(h.ID, mcp.INTERNAL_ERROR, "lro-proxy: the remote's answer to "+h.Method+" was not read", p.lim.errText)
	case ex.failed:
		return rawMessage(h.ID, "error", ex.answer)
	}
	return resultMessage(h.ID, ex.answer)
}

// sendTyped sends the request h with the method of mcp-go's client that
// speaks it, its params decoded as that method takes them.
func sendTyped(ctx context.Context, c *client.Client, h *header) error {
	decode := func(v any) error {
		if len(h.Params) == 0 || string(h.Params) == "null" {
			return nil
		}
		if err := json.Unmarshal(h.Params, v); err != nil {
			return fmt.Errorf("the params of %s: %w", h.Method, err)
		}
		return nil
	}
	var err error
	switch h.Method {
	case string(mcp.MethodPromptsList):
		var req mcp.ListPromptsRequest
		if err = decode(&req.Params); err == nil {
			_, err = c.ListPromptsByPage(ctx, req)
		}
	case string(mcp.MethodPromptsGet):
		var req mcp.GetPromptRequest
		if err = decode(&req.Params); err == nil {
			_, err = c.GetPrompt(ctx, req)
		}
	case string(mcp.MethodResourcesList):
		var req mcp.ListResourcesRequest
		if err = decode(&req.Params); err == nil {
			_, err = c.ListResourcesByPage(ctx, req)
		}
	case string(mcp.MethodResourcesTemplatesList):
		var req mcp.ListResourceTemplatesRequest
		if err = decode(&req.Params); err == nil {
			_, err = c.ListResourceTemplatesByPage(ctx, req)
		}
	case string(mcp.MethodResourcesRead):
		var req mcp.ReadResourceRequest
		if err = decode(&req.Params); err == nil {
			_, err = c.ReadResource(ctx, req)
		}
	case string(mcp.MethodResourcesSubscribe):
		var req mcp.SubscribeRequest
		if err = decode(&req.Params); err == nil {
			//lint:ignore SA1019 the client's resources/subscribe, which the remote's protocol may still have
			err = c.Subscribe(ctx, req)
		}
	case string(mcp.MethodResourcesUnsubscribe):
		var req mcp.UnsubscribeRequest
		if err = decode(&req.Params); err == nil {
			//lint:ignore SA1019 the client's resources/unsubscribe, as for Subscribe
			err = c.Unsubscribe(ctx, req)
		}
	case string(mcp.MethodCompletionComplete):
		var req mcp.CompleteRequest
		if err = decode(&req.Params); err == nil {
			_, err = c.Complete(ctx, req)
		}
	default:
		err = errors.New("not a relayed method")
	}
	return err
}

// ownListing returns result, the remote's answer to the listing method,
// with the proxy's own items (the lro:// templates) after the remote's on
// its last page; for the other methods, result as it came. With result
// nil (a listing the remote lacks), it returns a listing of the proxy's
// own items, or nil when it has none. When params, the request's, are of
// protocol 2026-07-28, a page that holds the proxy's items carries their
// cache hints (see withListingHints).
func (rr *remoteRelay) ownListing(method string, result json.RawMessage, lacking bool, params json.RawMessage) json.RawMessage {
	var key, uriKey, kind string
	switch method {
	case string(mcp.MethodResourcesList):
		key, uriKey, kind = "resources", "uri", "resources"
	case string(mcp.MethodResourcesTemplatesList):
		key, uriKey, kind = "resourceTemplates", "uriTemplate", "templates"
	default:
		if lacking {
			return nil
		}
		return result
	}
	local := rr.p.front.HandleMessage(context.Background(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"lro-proxy","method":%q}`, method))
	b, _ := json.Marshal(local)
	var resp struct {
		Result map[string][]json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(b, &resp)
	own := ownItems(rr.p, kind, resp.Result[key], func(it json.RawMessage) string {
		var v map[string]json.RawMessage
		var uri string
		if json.Unmarshal(it, &v) == nil {
			_ = json.Unmarshal(v[uriKey], &uri)
		}
		return uri
	})
	if lacking {
		if len(own) == 0 {
			return nil
		}
		page := map[string]json.RawMessage{}
		page[key], _ = json.Marshal(own)
		if modernRequest(params) {
			withListingHints(page)
		}
		out, _ := json.Marshal(page)
		return out
	}
	if len(own) == 0 {
		return result
	}
	var page map[string]json.RawMessage
	var items []json.RawMessage
	if json.Unmarshal(result, &page) != nil || page == nil || json.Unmarshal(page[key], &items) != nil {
		return result
	}
	var next string
	if _ = json.Unmarshal(page["nextCursor"], &next); next != "" {
		return result
	}
	page[key], _ = json.Marshal(append(items, own...))
	if modernRequest(params) {
		withListingHints(page)
	}
	out, err := json.Marshal(page)
	if err != nil {
		return result
	}
	return out
}

// resultMessage is the message that answers the request id with result.
func resultMessage(id, result json.RawMessage) []byte { return rawMessage(id, "result", result) }

// rawMessage is the answer to the request id whose member kind ("result"
// or "error") is v, as it is.
func rawMessage(id json.RawMessage, kind string, v json.RawMessage) []byte {
	b := make([]byte, 0, len(id)+len(v)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"`...)
	b = append(b, kind...)
	b = append(b, `":`...)
	b = append(b, v...)
	return append(b, '}')
}

// errorMessage is the message that answers the request id with a
// JSON-RPC error, its message cut at limit bytes.
func errorMessage(id []byte, code int, msg string, limit int64) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, proxyClip(msg, limit)}})
	return b
}
