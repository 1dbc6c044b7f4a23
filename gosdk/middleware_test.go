package gosdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newOffloader(t *testing.T, opts ...lro.Option) *lro.Offloader {
	t.Helper()
	cfg := lro.DefaultConfig()
	cfg.OutputDir = t.TempDir()
	off, err := lro.New(cfg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { off.Close() })
	return off
}

type record struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
}

type exportResult struct {
	Count   int      `json:"count"`
	Records []record `json:"records"`
}

// newServer returns a server with a text tool "logs" (3000 lines) and a
// typed tool "export", whose output schema the SDK infers.
func newServer(off *lro.Offloader) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	gosdk.Install(s, off)
	s.AddTool(&mcp.Tool{Name: "logs", InputSchema: json.RawMessage(`{"type":"object","properties":{"lines":{"type":"integer"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("level=info msg=served\n", 3000)}}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "export"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, exportResult, error) {
		out := exportResult{Records: make([]record, 2000)}
		for i := range out.Records {
			out.Records[i] = record{ID: i, Title: "a record of the export"}
		}
		out.Count = len(out.Records)
		return nil, out, nil
	})
	return s
}

// recorder keeps the bodies of the HTTP responses a client reads.
type recorder struct {
	mu     sync.Mutex
	bodies []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	r.mu.Lock()
	r.bodies = append(r.bodies, string(b))
	r.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, err
}

func (r *recorder) find(substr string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bodies {
		if strings.Contains(b, substr) {
			return b
		}
	}
	return ""
}

// connectHTTP connects a go-sdk client over streamable HTTP, recording
// what the server sends.
func connectHTTP(t *testing.T, s *mcp.Server, protocol string) (*mcp.ClientSession, *recorder) {
	t.Helper()
	// Stateless: the SDK's transport serves protocol 2026-07-28 only so.
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	rec := &recorder{}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: srv.URL, HTTPClient: &http.Client{Transport: rec}, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs, rec
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return res
}

func text(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

// Under protocol 2026-07-28 every result carries resultType; a replaced
// result must keep what the SDK set, and one the middleware makes itself
// must carry it too.
func TestResultTypeKept(t *testing.T) {
	off := newOffloader(t, lro.WithTool("logs", lro.ToolPolicy{}))
	cs, rec := connectHTTP(t, newServer(off), "2026-07-28")

	res := call(t, cs, "logs", nil)
	assert.Contains(t, text(res), `"offloaded":true`)
	body := rec.find(`\"offloaded\":true`)
	require.NotEmpty(t, body, "the offloaded result went over the wire")
	assert.Contains(t, body, `"resultType":"complete"`)

	res = call(t, cs, "logs", map[string]any{"detail": "huge"})
	require.True(t, res.IsError)
	body = rec.find(`invalid detail`)
	require.NotEmpty(t, body)
	assert.Contains(t, body, `"resultType":"complete"`)
}

func TestResultTypeAbsentOnOlderProtocol(t *testing.T) {
	off := newOffloader(t, lro.WithTool("logs", lro.ToolPolicy{}))
	cs, rec := connectHTTP(t, newServer(off), "2025-11-25")
	res := call(t, cs, "logs", map[string]any{"detail": "huge"})
	require.True(t, res.IsError)
	body := rec.find(`invalid detail`)
	require.NotEmpty(t, body)
	assert.NotContains(t, body, `resultType`)
}

// A typed tool whose policy skips output-schema tools passes through, and
// the first large result says so once in the log. The middleware knows the
// schema even when the client never listed the tools (protocol 2026-07-28
// needs no tools/list before a call).
func TestSkippedOutputSchemaToolIsLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	off := newOffloader(t, lro.WithTool("export", lro.ToolPolicy{Generic: true, SkipOutputSchema: true}),
		lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	cs, _ := connectHTTP(t, newServer(off), "2026-07-28")
	for range 3 {
		res := call(t, cs, "export", nil)
		require.False(t, res.IsError)
		assert.NotContains(t, text(res), `"offloaded"`)
		assert.NotNil(t, res.StructuredContent)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "declares an output schema"), logs.String())
}

// A tool without a policy whose result is over the threshold is logged
// once, with the fix.
func TestToolWithoutPolicyIsLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	off := newOffloader(t, lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	cs, _ := connectHTTP(t, newServer(off), "2026-07-28")
	for range 3 {
		res := call(t, cs, "logs", nil)
		assert.NotContains(t, text(res), `"offloaded"`)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "has no offload policy"), logs.String())
	assert.Contains(t, logs.String(), `lro.WithTool(\"logs\"`)
}

func TestIsProxyClient(t *testing.T) {
	withMeta := func(meta map[string]any) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: meta, Name: "recall_memories"}}
	}
	assert.True(t, gosdk.IsProxyClient(withMeta(map[string]any{
		mcp.MetaKeyClientInfo: map[string]any{"name": "lro-proxy", "version": "1", "proxy": true}})), "clientInfo.proxy in _meta")
	assert.True(t, gosdk.IsProxyClient(withMeta(map[string]any{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientCapabilities: map[string]any{"experimental": map[string]any{host.ProxyCapability: map[string]any{}}}})), "the capability in _meta")
	assert.False(t, gosdk.IsProxyClient(withMeta(map[string]any{
		mcp.MetaKeyClientInfo: map[string]any{"name": "claude", "version": "1"}})))
	assert.False(t, gosdk.IsProxyClient(withMeta(nil)))
	assert.False(t, gosdk.IsProxyClient(nil))
}

// A client that announces the proxy capability at initialize (protocol
// 2025-11-25) gets full results for the whole session.
func TestProxySessionGetsFullResults(t *testing.T) {
	off := newOffloader(t, lro.WithTool("logs", lro.ToolPolicy{}))
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(off) }, nil))
	t.Cleanup(srv.Close)
	c := mcp.NewClient(&mcp.Implementation{Name: "lro-proxy", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Experimental: map[string]any{host.ProxyCapability: map[string]any{}}},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	res := call(t, cs, "logs", nil)
	assert.Equal(t, 3000, strings.Count(text(res), "\n"))
}
