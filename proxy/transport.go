package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro/internal/proxywire"
)

// proxyTransport is the streamable-HTTP transport of a proxy's upstream
// connection. It adds what mcp-go's typed client cannot send or keep:
//
//   - clientInfo.proxy = true, in initialize and in the per-request client
//     info of protocol 2026-07-28 (mcp.Implementation has no such field);
//   - the raw tools/list result, so that remote tools are re-served with
//     their schemas byte for byte (mcp.Tool drops what it does not model);
//   - the result of a forwarded tools/call, decoded once and without maps
//     by its HTTP client, in place of the typed client's decodes (see
//     proxy_raw.go);
//   - what its HTTP client saw of each request (see proxy_limits.go): the
//     limit that stopped a response, which mcp-go does not report for an
//     event stream, and the HTTP status or content type of a failure,
//     which tells a misconfigured remote from one that is down.
type proxyTransport struct {
	*transport.StreamableHTTP

	mu    sync.Mutex
	tools map[string]json.RawMessage // tool name -> raw tool object
}

func newProxyTransport(t *transport.StreamableHTTP) *proxyTransport {
	return &proxyTransport{StreamableHTTP: t, tools: map[string]json.RawMessage{}}
}

func (p *proxyTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	req.Params = markProxy(req.Method, req.Params)
	call := &remoteCall{longLived: req.Method == string(mcp.MethodSubscriptionsListen)}
	rc, _ := ctx.Value(rawCallKey{}).(*rawCall)
	if rc != nil && req.Method == string(mcp.MethodToolsCall) {
		call.raw = true
		rc.res = nil // a step of a multi-round trip: only the last result counts
	}
	resp, err := p.StreamableHTTP.SendRequest(withRemoteCall(ctx, call), req)
	if err = call.outcome(err); err != nil {
		return nil, err
	}
	if resp == nil || resp.Error != nil {
		return resp, err
	}
	switch req.Method {
	case string(mcp.MethodToolsList):
		p.capture(resp.Result)
	case string(mcp.MethodToolsCall):
		// The stub is what mcp-go read of the response the HTTP
		// transport took: the result is the one it kept.
		if res := call.result(); res != nil && call.raw && bytes.Equal(resp.Result, rawStub) {
			rc.res = res
		}
	}
	return resp, err
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

func (p *proxyTransport) capture(result json.RawMessage) {
	var page struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range page.Tools {
		var named struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(t, &named) == nil {
			p.tools[named.Name] = t
		}
	}
}

// rawTool returns the tool as the remote sent it.
func (p *proxyTransport) rawTool(name string) json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tools[name]
}
