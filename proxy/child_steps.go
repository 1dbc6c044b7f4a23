package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/proxywire"
	"github.com/mcplro/lro/mcpgo"
)

// The requests of the client that the proxy of a local server takes part
// in (see child.go): initialize, the tool, resource and template listings,
// tools/call, and the lro:// resources.

// handle answers a request of the client that the proxy takes part in,
// returning the message for the client, or nil.
func (r *relay) handle(ctx context.Context, h *header, line []byte) []byte {
	sctx := r.p.front.WithContext(ctx, r.sess)
	switch h.Method {
	case string(mcp.MethodInitialize):
		return r.initialize(ctx, sctx, h, line)
	case string(mcp.MethodServerDiscover):
		return r.declared(ctx, h, line)
	case string(mcp.MethodToolsList):
		if !r.has("tools") {
			return r.local(sctx, line)
		}
		return r.listing(ctx, h, line, "tools", r.admitTools, func(tools []json.RawMessage, last bool) ([]json.RawMessage, error) {
			if err := r.follow(h, tools, last); err != nil {
				return nil, err
			}
			return r.toolsPage(tools, last), nil
		})
	case string(mcp.MethodResourcesList), string(mcp.MethodResourcesTemplatesList):
		key := "resources"
		if h.Method == string(mcp.MethodResourcesTemplatesList) {
			key = "resourceTemplates"
		}
		if !r.has("resources") {
			return r.local(sctx, line)
		}
		own := 0
		msg := r.listing(ctx, h, line, key, nil, func(items []json.RawMessage, last bool) ([]json.RawMessage, error) {
			if last {
				local := r.localItems(sctx, h.Method, key)
				own = len(local)
				items = append(items, local...)
			}
			return items, nil
		})
		if own > 0 {
			msg = listingHints(msg, h.Params) // the page that holds the lro:// templates
		}
		return msg
	case string(mcp.MethodResourcesRead):
		var params struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(h.Params, &params) != nil || !strings.HasPrefix(params.URI, "lro://") {
			return r.relayBounded(ctx, sctx, h, line)
		}
		return r.local(sctx, line)
	case string(mcp.MethodPromptsGet):
		return r.relayBounded(ctx, sctx, h, line)
	case string(mcp.MethodToolsCall):
		return r.toolCall(ctx, sctx, h, line)
	case string(mcp.MethodTasksResult):
		// The result of a tool run as a task: a tools/call answer, which
		// passes the exit gate (cut, not offloaded: the task's tool is the
		// server's to know).
		resp, err := r.call(ctx, h.ID, h.Method, line)
		if err != nil {
			r.writeError(h.ID, mcp.INTERNAL_ERROR, r.failure(h.Method, err))
			return nil
		}
		return r.gateUnread(sctx, h.ID, h.Method, resp)
	}
	return nil
}

// local answers line with the local server.
func (r *relay) local(sctx context.Context, line []byte) []byte {
	resp := r.p.front.HandleMessage(sctx, line)
	if resp == nil {
		return nil
	}
	b, err := marshalMessage(resp)
	if err != nil {
		return nil
	}
	return b
}

// marshalMessage is json.Marshal of m, a message of the local server, but
// that it writes the envelope of a tools/call result itself: encoding/json
// reflects over the envelope, then compacts the JSON that the result
// (mcp.CallToolResult marshals itself) has just written compact, again,
// which cost a small call through the proxy 2.4 µs of its 70.
func marshalMessage(m mcp.JSONRPCMessage) ([]byte, error) {
	resp, ok := m.(mcp.JSONRPCResponse)
	if !ok {
		return json.Marshal(m)
	}
	res, ok := resp.Result.(mcp.CallToolResult)
	if !ok || resp.JSONRPC != mcp.JSONRPC_VERSION {
		return json.Marshal(m)
	}
	id, err := json.Marshal(resp.ID)
	if err != nil {
		return nil, err
	}
	return toolAnswer(id, &res)
}

// toolAnswer is the message that answers the tools/call id with res.
func toolAnswer(id json.RawMessage, res *mcp.CallToolResult) ([]byte, error) {
	body, err := res.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(id)+len(body)+len(`{"jsonrpc":"2.0","id":,"result":}`))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, body...)
	return append(b, '}'), nil
}

// localItems returns the items under key of the local server's answer to
// the listing method.
func (r *relay) localItems(sctx context.Context, method, key string) []json.RawMessage {
	b := r.local(sctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"lro-proxy","method":%q}`, method))
	var resp struct {
		Result map[string][]json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(b, &resp)
	return resp.Result[key]
}

// has reports whether the server declared the capability name. Before
// initialize, it is taken to.
func (r *relay) has(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.caps == nil {
		return true
	}
	_, ok := r.caps[name]
	return ok
}

// initialize relays the client's initialize, marked as a proxy's, and
// adds to the server's answer the capabilities the proxy serves.
func (r *relay) initialize(ctx, sctx context.Context, h *header, line []byte) []byte {
	r.local(sctx, line) // the local server learns the client
	var params map[string]json.RawMessage
	if json.Unmarshal(h.Params, &params) != nil || params == nil {
		params = map[string]json.RawMessage{}
	}
	params["clientInfo"] = proxywire.WithProxyFlag(params["clientInfo"])
	params["capabilities"] = withProxyCapability(params["capabilities"])
	fwd, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": h.ID, "method": h.Method, "params": params})
	return r.declared(ctx, h, fwd)
}

// declared relays line, the client's initialize or server/discover (each
// answered with the server's capabilities), and returns the server's
// answer with the capabilities the proxy serves added: tools for
// lro_extract, resources for the lro:// templates. It notes the server's
// own, to tell what it lacks.
func (r *relay) declared(ctx context.Context, h *header, line []byte) []byte {
	resp, err := r.call(ctx, h.ID, h.Method, line)
	if err != nil {
		r.writeError(h.ID, mcp.INTERNAL_ERROR, r.failure(h.Method, err))
		return nil
	}
	var msg map[string]json.RawMessage
	var result map[string]json.RawMessage
	if json.Unmarshal(resp, &msg) != nil || json.Unmarshal(msg["result"], &result) != nil || result == nil {
		return resp // an error: the client reads it
	}
	var sc map[string]json.RawMessage
	if json.Unmarshal(result["capabilities"], &sc) != nil || sc == nil {
		sc = map[string]json.RawMessage{}
	}
	r.mu.Lock()
	r.caps = maps.Clone(sc)
	r.mu.Unlock()
	if _, ok := sc["tools"]; !ok && r.p.cfg.Extract {
		sc["tools"] = json.RawMessage(`{}`)
	}
	if _, ok := sc["resources"]; !ok && r.p.off.Host().ServesResources() {
		sc["resources"] = json.RawMessage(`{}`)
	}
	result["capabilities"], _ = json.Marshal(sc)
	msg["result"], _ = json.Marshal(result)
	b, _ := json.Marshal(msg)
	return b
}

// listing relays a paginated listing, passing the items under key of each
// page of the server's through edit (last: the page has no next cursor).
// When admit (if not nil) refuses the page's size before it is decoded, or
// edit fails, the client gets the error instead of the page.
func (r *relay) listing(ctx context.Context, h *header, line []byte, key string, admit func(size int) error, edit func(items []json.RawMessage, last bool) ([]json.RawMessage, error)) []byte {
	resp, err := r.call(ctx, h.ID, h.Method, line)
	if err == nil && admit != nil {
		err = admit(len(resp))
	}
	if err != nil {
		r.writeError(h.ID, mcp.INTERNAL_ERROR, r.failure(h.Method, err))
		return nil
	}
	var msg map[string]json.RawMessage
	var result map[string]json.RawMessage
	if json.Unmarshal(resp, &msg) != nil {
		return resp
	}
	if methodNotFound(msg["error"]) {
		// A listing the server lacks (it declares resources, but has no
		// templates): the proxy's own items alone, when it has any.
		own, err := edit(nil, true)
		if err != nil || len(own) == 0 {
			return resp
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": h.ID, "result": map[string]any{key: own}})
		return b
	}
	if json.Unmarshal(msg["result"], &result) != nil || result == nil {
		return resp
	}
	var items []json.RawMessage
	if json.Unmarshal(result[key], &items) != nil {
		return resp
	}
	var cursor string
	_ = json.Unmarshal(result["nextCursor"], &cursor)
	items, err = edit(items, cursor == "")
	if err != nil {
		r.writeError(h.ID, mcp.INTERNAL_ERROR, r.failure(h.Method, err))
		return nil
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	result[key], _ = json.Marshal(items)
	msg["result"], _ = json.Marshal(result)
	b, _ := json.Marshal(msg)
	return b
}

// methodNotFound reports whether raw, the error of an answer, is
// JSON-RPC's "Method not found".
func methodNotFound(raw json.RawMessage) bool {
	var e struct {
		Code int `json:"code"`
	}
	return len(raw) > 0 && json.Unmarshal(raw, &e) == nil && e.Code == mcp.METHOD_NOT_FOUND
}

// toolsPage edits a page of the server's tools: the output schemas of the
// tools whose results are offloaded widened, the server's own lro_extract
// hidden by the local one, which is added to the last page. (The local
// server serves the listing's tools, and judges their calls: see follow.)
func (r *relay) toolsPage(tools []json.RawMessage, last bool) []json.RawMessage {
	out := tools[:0]
	for _, raw := range tools {
		var t map[string]json.RawMessage
		var name string
		if json.Unmarshal(raw, &t) != nil || json.Unmarshal(t["name"], &name) != nil || name == "" {
			out = append(out, raw)
			continue
		}
		if name == lro.ExtractToolName && r.p.cfg.Extract {
			r.p.warnOnce("hidden "+lro.ExtractToolName, "lro proxy: the server's own lro_extract is hidden by the local one")
			continue
		}
		if schema := t["outputSchema"]; len(schema) > 0 && string(schema) != "null" && r.judged(name) {
			w := mcpgo.WidenTool(r.p.off, mcp.Tool{Name: name, RawOutputSchema: schema})
			if len(w.RawOutputSchema) > 0 && string(w.RawOutputSchema) != string(schema) {
				t["outputSchema"] = w.RawOutputSchema
				raw, _ = json.Marshal(t)
			}
		}
		out = append(out, raw)
	}
	if last && r.p.cfg.Extract {
		if st := r.p.front.GetTool(lro.ExtractToolName); st != nil {
			if b, err := json.Marshal(st.Tool); err == nil {
				out = append(out, b)
			}
		}
	}
	return out
}

// judged reports whether the results of the server's tool name are
// offloaded.
func (r *relay) judged(name string) bool {
	return !r.p.cfg.MemoryToolsOnly || r.p.off.Host().HasPolicy(name)
}

// childCallKey is the context key of the *childCall of a tools/call.
type childCallKey struct{}

// childCall is a tools/call of the client on its way to the server.
type childCall struct {
	r       *relay
	id      json.RawMessage
	line    []byte
	unread  []byte // the server's answer, when it is not a tool result the proxy reads (see gateUnread)
	fetched bool   // the server has answered already: answer, err
	answer  []byte
	err     error
}

// toolCall answers tools/call: lro_extract locally, the server's tools
// through the local server, which judges their results.
func (r *relay) toolCall(ctx, sctx context.Context, h *header, line []byte) []byte {
	// Decoded as the local server decodes it: when it cannot be, the
	// local server answers with its error, and the server never sees it.
	var params mcp.CallToolParams
	valid := json.Unmarshal(h.Params, &params) == nil
	if params.Name == lro.ExtractToolName && r.p.cfg.Extract {
		return r.local(sctx, line)
	}
	if params.Name == "" || !r.has("tools") {
		return r.local(sctx, line) // the local server's error
	}
	r.serveUnlisted(params.Name)
	cc := &childCall{r: r, id: h.ID, line: line}
	if valid && r.p.front.GetTool(params.Name) != nil {
		// The server answers first: a small answer, which the Offloader
		// would pass unchanged, needs no round through the local server
		// (its decoding, hooks and middleware were most of what the
		// proxy added to a small call); a larger one goes through it.
		cc.fetched = true
		cc.answer, cc.err = r.call(ctx, h.ID, string(mcp.MethodToolsCall), line)
		if cc.err == nil && r.p.off.Host().PassesUnchanged(params.Name, len(cc.answer)) {
			if b := r.passSmall(sctx, h.ID, params.Name, cc.answer); b != nil {
				return b
			}
		}
	}
	resp := r.local(context.WithValue(sctx, childCallKey{}, cc), line)
	if cc.unread != nil {
		return r.gateUnread(sctx, h.ID, params.Name, cc.unread)
	}
	return resp
}

// passSmall returns the message that answers the client's call id of
// tool with answer, the server's small answer, judged as the tool's
// handler judges it (a look-alike of a descriptor, an overlong error), or
// nil when it cannot be written. An answer that is not a tool result the
// proxy reads goes through the exit gate.
func (r *relay) passSmall(ctx context.Context, id json.RawMessage, tool string, answer []byte) []byte {
	_, res, ok := decodeRemoteMessage(answer)
	if !ok {
		return r.gateUnread(ctx, id, tool, answer)
	}
	marked := res.Meta != nil && (res.Meta.AdditionalFields[proxywire.MetaKey] != nil || res.Meta.AdditionalFields[mcp.MetaKeyServerInfo] != nil)
	judged := r.p.judge(tool, res)
	if judged == res && !marked {
		return answer // nothing in it is the proxy's to change: as it came ("isError": false and all)
	}
	b, err := toolAnswer(id, judged)
	if err != nil {
		return nil
	}
	return b
}
