package proxy

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// What a local server sends that the proxy bounds besides tool answers
// (see relayed.go): its prompts/get and resources/read results, and its
// requests to the client.

// relayBounded relays line, the client's prompts/get or resources/read
// of the server's own resource, and returns the message that answers it:
// the server's answer, its result through the exit gate.
func (r *relay) relayBounded(ctx, sctx context.Context, h *header, line []byte) []byte {
	resp, err := r.call(ctx, h.ID, h.Method, line)
	if err != nil {
		r.writeError(h.ID, mcp.INTERNAL_ERROR, r.failure(h.Method, err))
		return nil
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	switch {
	case json.Unmarshal(resp, &m) != nil:
		return resp // what the client cannot read: as it came
	case len(m.Error) > 0 && string(m.Error) != "null":
		return r.p.boundErrorMessage(h.ID, m.Error)
	case len(m.Result) == 0:
		return resp
	}
	result, err := r.p.boundResult(sctx, h.Method, h.Params, m.Result)
	if err != nil {
		return errorMessage(h.ID, mcp.INTERNAL_ERROR, err.Error(), 0)
	}
	if string(result) == string(m.Result) {
		return resp
	}
	return resultMessage(h.ID, result)
}

// boundAskLine returns line, a message of the server with id and method,
// as the client gets it: a request of the server to the client with its
// params through the exit gate (see relayed_asks.go), anything else as it
// came. A request the proxy refuses is answered with the error, and
// boundAskLine returns nil.
func (r *relay) boundAskLine(id json.RawMessage, method string, line []byte) []byte {
	if !isAsk(method) || len(id) == 0 || string(id) == "null" {
		return line
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil || m["params"] == nil {
		return line
	}
	params, err := r.p.boundAsk(r.p.ctx, method, m["params"])
	if err != nil {
		r.p.log.Warn("lro proxy: refused a request of the server too large to relay", "command", r.p.child.name, "error", err)
		refusal := errorMessage(id, mcp.INVALID_PARAMS, err.Error(), 0)
		go func() {
			// Not on the reader of the server's output: a server that
			// writes before it reads would hold it.
			ctx, cancel := context.WithTimeout(context.Background(), noticeTimeout)
			defer cancel()
			_ = r.send(ctx, refusal)
		}()
		return nil
	}
	if string(params) == string(m["params"]) {
		return line
	}
	m["params"] = params
	b, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return b
}
