package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/proxy"
)

// stubRemote is a streamable-HTTP server of protocol 2025-11-25 written by
// hand, as the official conformance suite's scenario servers are: it
// answers initialize, tools/list (one tool, echo) and tools/call, every
// other request with {} (server/discover too, unless discover says
// otherwise), and a GET only when it resumes a stream.
type stubRemote struct {
	discover string        // the result of server/discover; "" answers {}, "-" Method not found
	resume   bool          // tools/call: a priming event (id, retry), then the stream ends; the answer comes on the GET that resumes it
	retry    time.Duration // the retry field of the priming event
	notes    int           // tools/call: log messages sent on the call's stream before its answer
	modern   bool          // refuses initialize, as a server of 2026-07-28 only

	mu      sync.Mutex
	methods []string  // the methods posted, in order
	lastIDs []string  // the Last-Event-ID of each GET that carried one
	ended   time.Time // when the call's stream ended
	resumed time.Time // when a GET resumed it
	pending string    // the JSON id of the call whose stream ended
}

func (s *stubRemote) start(t *testing.T) string {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

func (s *stubRemote) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.methods)
}

func (s *stubRemote) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Mcp-Session-Id", "stub-session")
	if r.Method == http.MethodGet {
		s.mu.Lock()
		last, id := r.Header.Get("Last-Event-ID"), s.pending
		if last == "" || id == "" {
			s.mu.Unlock()
			w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
			return
		}
		s.lastIDs = append(s.lastIDs, last)
		s.resumed, s.pending = time.Now(), ""
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\nid: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n", id)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &req)
	s.mu.Lock()
	s.methods = append(s.methods, req.Method)
	s.mu.Unlock()
	if len(req.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	answer := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}
	switch req.Method {
	case "initialize":
		if s.modern {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"initialize is not served: send server/discover"}}`, req.ID)
			return
		}
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"stub","version":"1"}}`)
	case "server/discover":
		switch s.discover {
		case "":
			answer(`{}`)
		case "-":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, req.ID)
		default:
			answer(s.discover)
		}
	case "tools/list":
		answer(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		if s.notes > 0 {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range s.notes {
				fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"note %d\"}}\n\n", i)
			}
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"direct\"}]}}\n\n", req.ID)
			return
		}
		if !s.resume {
			answer(`{"content":[{"type":"text","text":"direct"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: e1\nretry: %d\ndata: \n\n", s.retry.Milliseconds())
		s.mu.Lock()
		s.pending, s.ended = string(req.ID), time.Now()
		s.mu.Unlock()
	default:
		answer(`{}`)
	}
}

// TestRemoteDiscoverAsSpecified: the proxy takes a remote for a server of
// protocol 2026-07-28 only when its answer to server/discover is what the
// specification says (the versions it supports, among them the one asked
// for, and its capabilities); otherwise it initializes, as with a server
// that does not know the method. Before, mcp-go's client took any answer
// that decoded, {} included, and never sent initialize.
func TestRemoteDiscoverAsSpecified(t *testing.T) {
	for _, tc := range []struct {
		name, discover string
		initialize     bool
	}{
		{"empty", "", true},
		{"method not found", "-", true},
		{"no versions", `{"capabilities":{}}`, true},
		{"versions not a list", `{"supportedVersions":"2026-07-28","capabilities":{}}`, true},
		{"no capabilities", `{"supportedVersions":["2026-07-28"]}`, true},
		{"older versions only", `{"supportedVersions":["2025-11-25","2025-06-18"],"capabilities":{"tools":{}}}`, true},
		{"as specified", `{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"resultType":"complete","ttlMs":0,"cacheScope":"public"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &stubRemote{discover: tc.discover}
			p, _ := startProxy(t, s.start(t), proxy.Config{})
			c := connect(t, p.Server())
			assert.Equal(t, "direct", textOf(t, callTool(t, c, "echo", nil), 0))
			assert.Equal(t, tc.initialize, slices.Contains(s.seen(), "initialize"), "initialize sent; the remote saw %v", s.seen())
		})
	}
}

// TestRemoteResumesEndedStream: a remote of protocol 2025-11-25 that ends
// a call's event stream after an event id and a retry field, before the
// answer (SEP-1699, the conformance suite's sse-retry scenario, which
// answers {} to server/discover), is resumed by a GET with Last-Event-ID
// after the time the retry field asks, and the answer comes on it. Before,
// the proxy took the {} for a server of 2026-07-28, where a stream is not
// resumed, and the call failed with "unexpected nil response".
func TestRemoteResumesEndedStream(t *testing.T) {
	s := &stubRemote{resume: true, retry: 300 * time.Millisecond}
	p, _ := startProxy(t, s.start(t), proxy.Config{})
	c := connect(t, p.Server())
	res := callTool(t, c, "echo", nil)
	require.False(t, res.IsError, textOf(t, res, 0))
	assert.Equal(t, "resumed", textOf(t, res, 0))
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Equal(t, []string{"e1"}, s.lastIDs, "the GET resumes after the priming event")
	// A lower bound only: the client waits the retry time before it asks.
	assert.GreaterOrEqual(t, s.resumed.Sub(s.ended), s.retry, "resumed before the retry time")
}

// TestRemoteFollowsClientGeneration: one proxy speaks to the remote in
// its client's generation as clients come: 2025-11-25 for a client of
// 2025-11-25, 2026-07-28 again for a client of 2026-07-28 that comes next.
func TestRemoteFollowsClientGeneration(t *testing.T) {
	s := server.NewMCPServer("gen", "1.0.0")
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("direct"), nil
	})
	hs := server.NewStreamableHTTPServer(s)
	var mu sync.Mutex
	var last string // the protocol version of the last tools/call
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			mu.Lock()
			last = r.Header.Get("Mcp-Protocol-Version")
			mu.Unlock()
		}
		hs.ServeHTTP(w, r)
	}))
	t.Cleanup(h.Close)
	p, _ := startProxy(t, h.URL, proxy.Config{})
	for _, version := range []string{"2025-11-25", "2026-07-28", "2025-11-25"} {
		c := connect(t, p.Server(), client.WithProtocolVersion(version))
		assert.Equal(t, "direct", textOf(t, callTool(t, c, "echo", nil), 0))
		mu.Lock()
		assert.Equal(t, version, last, "the protocol spoken to the remote for a client of %s", version)
		mu.Unlock()
		require.NoError(t, c.Close())
	}
}

// TestRemoteRefusesClientGeneration: a remote that refuses the client's
// older version (it serves 2026-07-28 only) is spoken to in the newest,
// and the client's calls are answered.
func TestRemoteRefusesClientGeneration(t *testing.T) {
	s := &stubRemote{modern: true, discover: `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`}
	p, _ := startProxy(t, s.start(t), proxy.Config{})
	c := connect(t, p.Server(), client.WithProtocolVersion("2025-11-25"))
	res := callTool(t, c, "echo", nil)
	require.False(t, res.IsError, textOf(t, res, 0))
	assert.Equal(t, "direct", textOf(t, res, 0))
	seen := s.seen()
	i := slices.Index(seen, "initialize")
	require.GreaterOrEqual(t, i, 0, "the client's version was not asked of the remote: %v", seen)
	assert.Contains(t, seen[i:], "server/discover", "no fallback to the newest after the refusal: %v", seen)
}
