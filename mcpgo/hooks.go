package mcpgo

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
)

// AddHooks registers on h what the Offloader needs to see in raw requests:
// the initialize request of a proxy client, whose clientInfo.proxy field
// the SDK's typed client info drops, and the results of task tools, so
// that a task tool whose handler is not wrapped by [TaskHandler] is logged
// once when its result goes out inline over the threshold; and the end of
// sessions, whose session budget it forgets; and the cache hints of a
// resources/read of an offloaded file (private, until the file expires). [ServerOption] does this for
// you when the server already has hooks (server.WithHooks given before
// it) or has none.
func AddHooks(h *server.Hooks, off *lro.Offloader) {
	st := stateOf(off)
	addTaskHooks(h, off, st)
	st.hooked.Store(true)
	h.AddAfterReadResource(func(ctx context.Context, _ any, req *mcp.ReadResourceRequest, res *mcp.ReadResourceResult) {
		cacheHints(ctx, st, req, res)
	})
	h.AddOnRequestInitialization(func(ctx context.Context, _ any, message any) error {
		raw, ok := message.(json.RawMessage)
		if !ok || !initializeFromProxy(raw) {
			return nil
		}
		if s := server.ClientSessionFromContext(ctx); s != nil && s.SessionID() != "" {
			st.proxies.Store(s.SessionID(), true)
		}
		return nil
	})
	h.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		st.proxies.Delete(s.SessionID())
		off.EndSession(s.SessionID())
	})
}

func initializeFromProxy(raw json.RawMessage) bool {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ClientInfo   map[string]any `json:"clientInfo"`
			Capabilities struct {
				Experimental map[string]any `json:"experimental"`
			} `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &msg) != nil || msg.Method != string(mcp.MethodInitialize) {
		return false
	}
	return host.ProxyAnnounced(msg.Params.ClientInfo, msg.Params.Capabilities.Experimental)
}

// IsProxyClient reports whether the client of the current request is an
// LRO proxy, which offloads on its own side and so wants full results
// inline. It looks at every channel a proxy may use: clientInfo.proxy in
// the request's _meta (protocol 2026-07-28), the experimental capability
// [host.ProxyCapability] in the request's _meta or the session, and the
// session's initialize request, which the hooks of [AddHooks] see for off.
func IsProxyClient(ctx context.Context, req mcp.CallToolRequest, off *lro.Offloader) bool {
	if m := req.Params.Meta; m != nil {
		if ci, ok := m.AdditionalFields[mcp.MetaKeyClientInfo].(map[string]any); ok && host.ProxyAnnounced(ci, nil) {
			return true
		}
	}
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil {
		if host.ProxyAnnounced(nil, info.ClientCapabilities.Experimental) {
			return true
		}
	}
	s := server.ClientSessionFromContext(ctx)
	if s == nil {
		return false
	}
	if ws, ok := s.(server.SessionWithClientInfo); ok && host.ProxyAnnounced(nil, ws.GetClientCapabilities().Experimental) {
		return true
	}
	_, ok := stateOf(off).proxies.Load(s.SessionID())
	return ok
}
