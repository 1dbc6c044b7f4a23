package mcpgo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/proxywire"
	"github.com/mcplro/lro/lrotest"
	"github.com/mcplro/lro/mcpgo"
)

// patching rewrites the params of every request, as a proxy built on any
// SDK might, so that each announcement channel can be tested alone.
type patching struct {
	*transport.InProcessTransport
	patch func(method string, params map[string]json.RawMessage)
}

func (p patching) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	b, _ := json.Marshal(req.Params)
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) == nil && m != nil {
		p.patch(req.Method, m)
		req.Params = m
	}
	return p.InProcessTransport.SendRequest(ctx, req)
}

// TestProxyDetectionChannels checks that the server recognizes a proxy by
// each channel on its own.
func TestProxyDetectionChannels(t *testing.T) {
	onlyInitializeClientInfo := func(method string, m map[string]json.RawMessage) {
		if method == string(mcp.MethodInitialize) {
			m["clientInfo"] = proxywire.WithProxyFlag(m["clientInfo"])
		}
	}
	onlyMetaClientInfo := func(method string, m map[string]json.RawMessage) {
		if raw, ok := m["_meta"]; ok {
			var meta map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(raw, &meta))
			if ci, ok := meta[mcp.MetaKeyClientInfo]; ok {
				meta[mcp.MetaKeyClientInfo] = proxywire.WithProxyFlag(ci)
			}
			m["_meta"], _ = json.Marshal(meta)
		}
	}
	capability := client.WithClientCapabilities(mcp.ClientCapabilities{Experimental: map[string]any{host.ProxyCapability: map[string]any{}}})
	none := func(string, map[string]json.RawMessage) {}

	for _, tc := range []struct {
		name    string
		version string
		patch   func(string, map[string]json.RawMessage)
		opts    []client.ClientOption
		proxy   bool
	}{
		{"plain client, 2025-11-25", mcp.ProtocolVersion20251125, none, nil, false},
		{"plain client, 2026-07-28", mcp.ProtocolVersion20260728, none, nil, false},
		{"initialize clientInfo.proxy", mcp.ProtocolVersion20251125, onlyInitializeClientInfo, nil, true},
		{"experimental capability in the session", mcp.ProtocolVersion20251125, none, []client.ClientOption{capability}, true},
		{"per-request _meta clientInfo.proxy", mcp.ProtocolVersion20260728, onlyMetaClientInfo, nil, true},
		{"per-request experimental capability", mcp.ProtocolVersion20260728, none, []client.ClientOption{capability}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := lro.New(lro.DefaultConfig(), lro.WithFS(lrotest.NewMemFS("/lro")))
			require.NoError(t, err)
			defer o.Close()
			seen := make(chan bool, 1)
			s := server.NewMCPServer("detect", "1", mcpgo.ServerOption(o))
			s.AddTool(mcp.NewTool("probe"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				seen <- mcpgo.IsProxyClient(ctx, req, o)
				return mcp.NewToolResultText("ok"), nil
			})
			tr := patching{transport.NewInProcessTransport(s), tc.patch}
			c := client.NewClient(tr, append(tc.opts, client.WithProtocolVersion(tc.version))...)
			require.NoError(t, c.Start(context.Background()))
			defer c.Close()
			init := mcp.InitializeRequest{}
			init.Params.ClientInfo = mcp.Implementation{Name: "probe", Version: "1"}
			_, err = c.Initialize(context.Background(), init)
			require.NoError(t, err)
			req := mcp.CallToolRequest{}
			req.Params.Name = "probe"
			_, err = c.CallTool(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, tc.proxy, <-seen)
		})
	}
}
