package lro_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/mcpgo"
	"github.com/mcplro/lro/proxy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SEP-2549 (protocol 2026-07-28): a listing that holds lro's lro://
// templates is private, as the files they lead to are, with ttlMs 0 (see
// host.ListingTTLMs). It went out with the server's hints: on the
// official SDK its default, public; on mcp-go what the server configured
// (here public for a minute); through the proxy's local server the same.
// Read on the wire by each SDK's client over streamable HTTP, at
// 2026-07-28 and at 2025-11-25, where mcp-go sends neither field.
func TestListingCacheHints(t *testing.T) {
	// A server that says its listings are everyone's for a minute.
	public := server.WithCacheHints(60000, mcpgomcp.CacheScopePublic)
	hosts := []struct {
		name  string
		serve func(t *testing.T, o *lro.Offloader) http.Handler
	}{
		{"mcp-go", func(_ *testing.T, o *lro.Offloader) http.Handler {
			return server.NewStreamableHTTPServer(server.NewMCPServer("hints", "1", public, mcpgo.ServerOption(o)))
		}},
		{"official SDK", func(_ *testing.T, o *lro.Offloader) http.Handler {
			s := mcp.NewServer(&mcp.Implementation{Name: "hints", Version: "1"}, nil)
			gosdk.Install(s, o)
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
		}},
		{"proxy remote", func(t *testing.T, o *lro.Offloader) http.Handler {
			rs := server.NewMCPServer("remote", "1", server.WithResourceCapabilities(false, true))
			rs.AddTool(mcpgomcp.NewTool("t"), mcpgoBoundHandler(boundResult{texts: []string{"ok"}}))
			rs.AddResourceTemplate(mcpgomcp.NewResourceTemplate("doc://{name}", "doc"), func(context.Context, mcpgomcp.ReadResourceRequest) ([]mcpgomcp.ResourceContents, error) {
				return nil, nil
			})
			remote := httptest.NewServer(server.NewStreamableHTTPServer(rs))
			t.Cleanup(remote.Close)
			p, err := proxy.New(o, proxy.Config{Remote: remote.URL, CallTimeout: time.Minute}, public)
			require.NoError(t, err)
			t.Cleanup(func() { p.Close() })
			return server.NewStreamableHTTPServer(p.Server())
		}},
	}
	for _, h := range hosts {
		t.Run(h.name, func(t *testing.T) {
			o := newOffloader(t, nil)
			srv := httptest.NewServer(h.serve(t, o))
			t.Cleanup(srv.Close)

			for _, version := range []string{"2026-07-28", "2025-11-25"} {
				t.Run(version, func(t *testing.T) {
					rec := &wireRecorder{}
					hc := &http.Client{Transport: rec}
					body := func() string {
						b := rec.find(`"resourceTemplates"`)
						require.NotEmpty(t, b, "the listing went over the wire")
						return b
					}
					// The official SDK's client.
					cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
						&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, DisableStandaloneSSE: true},
						&mcp.ClientSessionOptions{ProtocolVersion: version})
					require.NoError(t, err)
					t.Cleanup(func() { cs.Close() })
					res, err := cs.ListResourceTemplates(context.Background(), nil)
					require.NoError(t, err)
					require.True(t, hasLROTemplate(res), "lro's templates are listed")
					checkListingHints(t, version, h.name, body())

					// mcp-go's client.
					rec.reset()
					tr, err := transport.NewStreamableHTTP(srv.URL, transport.WithHTTPBasicClient(hc))
					require.NoError(t, err)
					c := mcpgoclient.NewClient(tr, mcpgoclient.WithProtocolVersion(version))
					require.NoError(t, c.Start(context.Background()))
					t.Cleanup(func() { c.Close() })
					_, err = c.Initialize(context.Background(), mcpgomcp.InitializeRequest{Params: mcpgomcp.InitializeParams{ClientInfo: mcpgomcp.Implementation{Name: "c", Version: "1"}}})
					require.NoError(t, err)
					mres, err := c.ListResourceTemplates(context.Background(), mcpgomcp.ListResourceTemplatesRequest{})
					require.NoError(t, err)
					if version == "2026-07-28" {
						ttl, ok := mres.TTL()
						assert.True(t, ok, "mcp-go's client reads a ttlMs")
						assert.Zero(t, ttl)
						assert.Equal(t, mcpgomcp.CacheScopePrivate, mres.CacheScope)
					}
					checkListingHints(t, version, h.name, body())
				})
			}
		})
	}
}

// checkListingHints checks the cache hints of body, the listing of lro's
// templates that a server of host sent at protocol version.
func checkListingHints(t *testing.T, version, host, body string) {
	t.Helper()
	var msg struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &msg), "%s", body)
	scope, ttl := string(msg.Result["cacheScope"]), string(msg.Result["ttlMs"])
	if version < "2026-07-28" && host != "official SDK" {
		assert.Empty(t, scope, "no field of 2026-07-28 before it")
		assert.Empty(t, ttl, "no field of 2026-07-28 before it")
		return
	}
	// The official SDK writes both fields at every version.
	assert.Equal(t, `"private"`, scope, "a listing of lro's templates is private: %s", body)
	assert.Equal(t, `0`, ttl, "and revalidated: %s", body)
}

// hasLROTemplate reports whether res lists an lro:// template.
func hasLROTemplate(res *mcp.ListResourceTemplatesResult) bool {
	for _, t := range res.ResourceTemplates {
		if strings.HasPrefix(t.URITemplate, "lro://") {
			return true
		}
	}
	return false
}

// wireRecorder is an HTTP transport that keeps the bodies of the answers
// it carries, as they came on the wire.
type wireRecorder struct {
	mu     sync.Mutex
	bodies []string
}

func (r *wireRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.Header.Get("Content-Type") == "text/event-stream" && req.Method == http.MethodGet {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	r.mu.Lock()
	r.bodies = append(r.bodies, string(b))
	r.mu.Unlock()
	return resp, nil
}

// find returns the JSON-RPC message of the first body that holds substr,
// read out of an event stream when it is one.
func (r *wireRecorder) find(substr string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bodies {
		for line := range strings.SplitSeq(b, "\n") {
			line = strings.TrimPrefix(strings.TrimSpace(line), "data:")
			if strings.Contains(line, substr) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

func (r *wireRecorder) reset() {
	r.mu.Lock()
	r.bodies = nil
	r.mu.Unlock()
}
