package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The remote's requests to the client (sampling/createMessage,
// elicitation/create, roots/list) are relayed as JSON too while Serve
// serves the client: mcp-go's transport decodes each into maps and types,
// which lose the order of an elicitation form's fields (the form is shown
// in the order of their names) and what the types do not model. The
// event stream reader keeps each request as it came (rawAsks.note, from
// sseLimiter), the transport's request handler takes it by its id, and
// the relay sends it to the client under an id of its own, and the
// client's answer back as it came. Without Serve (a client of
// [Proxy.Server] in the same process), the typed path answers
// (remoteRequests).

// maxRawAsks bounds the requests kept as they came, not yet handled.
const maxRawAsks = 64

// rawAsks are the remote's requests to the client, as they came, by the
// JSON of their ids.
type rawAsks struct {
	mu   sync.Mutex
	msgs map[string][]byte
}

// note keeps msg, the request id of the remote as it came.
func (a *rawAsks) note(id json.RawMessage, msg []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.msgs == nil || len(a.msgs) >= maxRawAsks {
		a.msgs = map[string][]byte{} // requests no handler took: forgotten
	}
	a.msgs[string(id)] = msg
}

// take returns and forgets the request id, or nil.
func (a *rawAsks) take(id string) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	msg := a.msgs[id]
	delete(a.msgs, id)
	return msg
}

// askClient answers the remote's request req (id: the JSON of its id) by
// relaying it as it came to the client of the Serve in progress, and
// reports false when it cannot (no Serve, or the request was not kept):
// the typed path answers it then.
func (p *Proxy) askClient(ctx context.Context, id string, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, bool, error) {
	msg := p.asks.take(id)
	p.relayMu.Lock()
	rr := p.relay
	p.relayMu.Unlock()
	if msg == nil || rr == nil {
		return nil, false, nil
	}
	_, method, params, ok := peekHeader(msg)
	if !ok || methodName(method) != req.Method {
		return nil, false, nil
	}
	params, err := p.boundAsk(ctx, req.Method, params)
	var tooLarge *TooLargeError
	if errors.As(err, &tooLarge) {
		p.log.Warn("lro proxy: refused a request of the remote too large to relay", "remote", p.cfg.Remote, "error", err)
		return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Error: &mcp.JSONRPCErrorDetails{Code: mcp.INVALID_PARAMS, Message: err.Error()}}, true, nil
	}
	answer, err := rr.ask(ctx, method, params)
	if err != nil {
		return nil, true, err
	}
	var got struct {
		Result json.RawMessage          `json:"result"`
		Error  *mcp.JSONRPCErrorDetails `json:"error"`
	}
	if err := json.Unmarshal(answer, &got); err != nil {
		return nil, true, fmt.Errorf("lro: proxy: the client's answer to %s: %w", req.Method, err)
	}
	return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Result: got.Result, Error: got.Error}, true, nil
}

// askPrefix begins the ids of the requests the relay sends the client.
const askPrefix = `"lro-proxy-ask-`

// clientAsks are the relay's requests to the client waiting for their
// answers, by the JSON of their ids.
type clientAsks struct {
	next    atomic.Int64
	mu      sync.Mutex
	waiting map[string]chan []byte
}

// ask sends the client a request of method (JSON) with params (JSON, or
// nil), and returns the client's answer, the whole message. When ctx
// ends first (the remote cancelled its request, or the call ended), the
// client is told that the request is cancelled.
func (rr *remoteRelay) ask(ctx context.Context, method, params json.RawMessage) ([]byte, error) {
	id := fmt.Sprintf(`%s%d"`, askPrefix, rr.asks.next.Add(1))
	ch := make(chan []byte, 1)
	rr.asks.mu.Lock()
	if rr.asks.waiting == nil {
		rr.asks.waiting = map[string]chan []byte{}
	}
	rr.asks.waiting[id] = ch
	rr.asks.mu.Unlock()
	defer func() {
		rr.asks.mu.Lock()
		delete(rr.asks.waiting, id)
		rr.asks.mu.Unlock()
	}()
	msg := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%s`, id, method)
	if len(params) > 0 {
		msg = append(append(msg, `,"params":`...), params...)
	}
	rr.out.writeLine(append(msg, '}'))
	select {
	case answer := <-ch:
		return answer, nil
	case <-ctx.Done():
		rr.out.writeLine(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"the server cancelled its request"}}`, id))
		return nil, ctx.Err()
	}
}

// answered hands line, the client's answer to the request id, to the ask
// waiting for it, and reports whether one was.
func (rr *remoteRelay) answered(id []byte, line []byte) bool {
	rr.asks.mu.Lock()
	ch := rr.asks.waiting[string(id)]
	delete(rr.asks.waiting, string(id))
	rr.asks.mu.Unlock()
	if ch != nil {
		ch <- line
	}
	return ch != nil
}
