package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/benchdata"
	"github.com/mcplro/lro/proxy"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// remote is a memory server on streamable HTTP with its own offloader.
type remote struct {
	mcp  *server.MCPServer
	off  *lro.Offloader
	http *httptest.Server
	auth atomic.Value // required Authorization header, if any
}

func startRemote(t *testing.T) *remote { return startRemoteB(t) }

func startRemoteB(t testing.TB) *remote {
	t.Helper()
	r := &remote{off: newOffloader(t, func(c *lro.Config) {
		if b, ok := t.(*testing.B); ok { // BenchmarkProxy: honour LRO_BENCH_DIR
			c.OutputDir = benchdata.Dir(b)
		}
	})}
	r.mcp = memserver.New(testStore, r.off)
	h := server.NewStreamableHTTPServer(r.mcp)
	r.auth.Store("")
	r.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if want := r.auth.Load().(string); want != "" && req.Header.Get("Authorization") != want {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.http.Close)
	return r
}

func startProxy(t *testing.T, url string, cfg proxy.Config) (*proxy.Proxy, *lro.Offloader) {
	t.Helper()
	off := newOffloader(t, nil)
	cfg.Remote = url
	cfg.CallTimeout = 20 * time.Second
	p, err := proxy.New(off, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p, off
}

func dirEmpty(t *testing.T, dir string) bool {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	return len(entries) == 0
}

func TestProxyOffloadsLocally(t *testing.T) {
	for _, version := range []string{"", mcp.ProtocolVersion20251125} {
		t.Run("remote protocol="+version, func(t *testing.T) {
			rem := startRemote(t)
			p, off := startProxy(t, rem.http.URL, proxy.Config{ProtocolVersion: version, Extract: true})
			c := connect(t, p.Server())

			res := callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 200, "detail": "full"})
			d := descriptor(t, res)
			assert.Equal(t, off.Config().OutputDir, filepathDir(d.FilePath), "written on the proxy's side")
			assert.True(t, dirEmpty(t, rem.off.Config().OutputDir), "the remote sent it inline to the proxy")
			_, lines := readJSONL(t, readFile(t, d.FilePath))
			require.Len(t, lines, 200)
			hits := testStore.Recall("cache", "", 200)
			var first map[string]any
			require.NoError(t, json.Unmarshal(lines[0], &first))
			assert.Equal(t, hits[0].Memory.ID, first["id"], "the memory data is not altered")

			ext := callTool(t, c, "lro_extract", map[string]any{"file_path": d.FilePath, "recipe": 6})
			assert.False(t, ext.IsError, textOf(t, ext, 0))

			// A direct client of the same remote still gets its offloading.
			direct := descriptor(t, callTool(t, connect(t, rem.mcp), "recall_memories", map[string]any{"query": "cache", "limit": 200}))
			assert.Equal(t, rem.off.Config().OutputDir, filepathDir(direct.FilePath))
		})
	}
}

func filepathDir(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "."
}

// TestProxyKeepsToolsExactly lists a remote tool whose schema mcp-go's
// typed Tool cannot hold, through the proxy: it comes out byte for byte.
func TestProxyKeepsToolsExactly(t *testing.T) {
	rem := startRemote(t)
	schema := json.RawMessage(`{"type":"object","$defs":{"ns":{"type":"string","pattern":"^_"}},"properties":{"q":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"query"},"n":{"$ref":"#/$defs/ns"},"big":{"type":"integer","maximum":9007199254740993}},"required":["q"],"additionalProperties":false}`)
	tool := mcp.NewToolWithRawSchema("exotic", "a tool with a rich schema", schema)
	rem.mcp.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(string(req.Params.RawArguments)), nil
	})
	p, _ := startProxy(t, rem.http.URL, proxy.Config{})
	c := connect(t, p.Server())
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, []string{"recall_memories", "inject_context", "list_memories", "export_memories", "audit_log", "memory_graph", "exotic"}, names)

	got := p.Server().GetTool("exotic")
	require.NotNil(t, got)
	assert.Equal(t, string(schema), string(got.Tool.RawInputSchema), "served with the remote's schema, byte for byte")

	// Arguments go through untouched, big integers included.
	req := mcp.CallToolRequest{}
	req.Params.Name = "exotic"
	req.Params.Arguments = json.RawMessage(`{"q":"x","big":9007199254740993}`)
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	assert.JSONEq(t, `{"q":"x","big":9007199254740993}`, textOf(t, res, 0))
	assert.Contains(t, textOf(t, res, 0), "9007199254740993")
}

func TestProxyFollowsToolListChanges(t *testing.T) {
	t.Parallel() // it mostly waits (for the pacer, a timeout), and shares nothing
	for _, version := range []string{"", mcp.ProtocolVersion20251125} {
		t.Run("remote protocol="+version, func(t *testing.T) {
			t.Parallel()
			rem := startRemote(t)
			p, _ := startProxy(t, rem.http.URL, proxy.Config{ProtocolVersion: version})
			require.Eventually(t, func() bool { return p.Server().GetTool("recall_memories") != nil }, 5*time.Second, 10*time.Millisecond)
			rem.mcp.AddTool(mcp.NewTool("new_tool"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("hello"), nil
			})
			require.Eventually(t, func() bool { return p.Server().GetTool("new_tool") != nil }, 10*time.Second, 20*time.Millisecond,
				"the proxy follows the remote's list_changed (or lists again once subscribed)")
			rem.mcp.DeleteTools("new_tool")
			require.Eventually(t, func() bool { return p.Server().GetTool("new_tool") == nil }, 10*time.Second, 20*time.Millisecond)
		})
	}
}

func TestProxyHeadersAndRemoteErrors(t *testing.T) {
	rem := startRemote(t)
	rem.auth.Store("Bearer secret")
	p, _ := startProxy(t, rem.http.URL, proxy.Config{Headers: map[string]string{"Authorization": "Bearer secret"}})
	c := connect(t, p.Server())
	res := callTool(t, c, "recall_memories", map[string]any{"query": "x", "limit": 2})
	assert.False(t, res.IsError, textOf(t, res, 0))

	res = callTool(t, c, "recall_memories", map[string]any{"limit": 2}) // the remote's own tool error
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(t, res, 0), "query")

	_, err := proxy.New(newOffloader(t, nil), proxy.Config{})
	assert.ErrorContains(t, err, "no remote URL")
}

func TestProxyReconnects(t *testing.T) {
	rem := startRemote(t)
	addr := rem.http.Listener.Addr().String()
	p, _ := startProxy(t, rem.http.URL, proxy.Config{})
	c := connect(t, p.Server())
	require.False(t, callTool(t, c, "recall_memories", map[string]any{"query": "x", "limit": 2}).IsError)

	rem.http.CloseClientConnections()
	rem.http.Close()
	res := callTool(t, c, "recall_memories", map[string]any{"query": "x", "limit": 2})
	require.True(t, res.IsError, "a clear tool error while the remote is down")
	assert.Contains(t, textOf(t, res, 0), "unreachable")

	// The remote comes back on the same address.
	back := server.NewStreamableHTTPServer(memserver.New(testStore, newOffloader(t, nil)))
	srv := &http.Server{Addr: addr, Handler: back}
	ln, err := listenRetry(addr)
	require.NoError(t, err)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	require.Eventually(t, func() bool {
		return !callTool(t, c, "recall_memories", map[string]any{"query": "x", "limit": 2}).IsError
	}, 15*time.Second, 100*time.Millisecond, "calls work again")
	assert.True(t, isDescriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "x", "limit": 300})))
}

// TestProxyHangingRemote: a remote that stops answering costs each call its
// own timeout, never more, and a call that may have run is not sent twice.
func TestProxyHangingRemote(t *testing.T) {
	t.Parallel() // it mostly waits (for the pacer, a timeout), and shares nothing
	rem := startRemote(t)
	var runs atomic.Int32
	release := make(chan struct{})
	rem.mcp.AddTool(mcp.NewTool("slow"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		runs.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return mcp.NewToolResultText("done"), nil
	})
	defer close(release)
	off := newOffloader(t, nil)
	p, err := proxy.New(off, proxy.Config{Remote: rem.http.URL, CallTimeout: 500 * time.Millisecond})
	require.NoError(t, err)
	defer p.Close()
	c := connect(t, p.Server())
	for range 3 {
		start := time.Now()
		res := callTool(t, c, "slow", nil)
		assert.True(t, res.IsError)
		assert.Contains(t, textOf(t, res, 0), "did not answer slow within 500ms")
		testenv.Within(t, time.Since(start), 3*time.Second, "bounded by the call's timeout")
	}
	assert.EqualValues(t, 3, runs.Load(), "a call that timed out is not retried")
	res := callTool(t, c, "recall_memories", map[string]any{"query": "x", "limit": 2})
	assert.False(t, res.IsError, "other calls still work: %s", textOf(t, res, 0))
}

// TestProxyFollowsBurstsOfChanges adds many tools at once on the remote.
func TestProxyFollowsBurstsOfChanges(t *testing.T) {
	t.Parallel() // it mostly waits (for the pacer, a timeout), and shares nothing
	rem := startRemote(t)
	p, _ := startProxy(t, rem.http.URL, proxy.Config{})
	want := len(rem.mcp.ListTools()) + 40
	for i := range 40 {
		rem.mcp.AddTool(mcp.NewTool(fmt.Sprintf("tool_%02d", i)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	}
	require.Eventually(t, func() bool { return len(p.Server().ListTools()) == want }, 10*time.Second, 20*time.Millisecond)
}

// A remote on the official SDK's stateful transport answers
// server/discover but does not speak protocol 2026-07-28: the proxy falls
// back to the newest version the remote lists, and the remote still sees
// the proxy.
func TestProxyFallsBackToTheRemotesProtocol(t *testing.T) {
	remoteOff := newOffloader(t, nil)
	s := memserver.NewOfficial(testStore, remoteOff)
	srv := httptest.NewServer(sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	p, off := startProxy(t, srv.URL, proxy.Config{})
	c := connect(t, p.Server())
	d := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 200}))
	assert.Equal(t, off.Config().OutputDir, filepathDir(d.FilePath), "offloaded by the proxy")
	assert.True(t, dirEmpty(t, remoteOff.Config().OutputDir), "the remote returned the full result")
}

// TestProxyGetsFullSets: a server using lro returns the set its handler
// handed to Collect (the pre-budget memories of inject_context, every page
// of list_memories) to a proxy, so the proxy offloads what a direct client
// would have had offloaded.
func TestProxyGetsFullSets(t *testing.T) {
	rem := startRemote(t)
	direct := connect(t, rem.mcp)
	p, off := startProxy(t, rem.http.URL, proxy.Config{})
	c := connect(t, p.Server())
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"inject_context", map[string]any{"query": "cache", "limit": 200, "token_budget": 300}},
		{"list_memories", map[string]any{"limit": 10}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			want := descriptor(t, callTool(t, direct, tc.tool, tc.args))
			got := descriptor(t, callTool(t, c, tc.tool, tc.args))
			assert.Equal(t, off.Config().OutputDir, filepathDir(got.FilePath), "offloaded by the proxy")
			assert.Equal(t, want.Summary.Count, got.Summary.Count)
			assert.Equal(t, want.Summary.Operation, got.Summary.Operation)
			_, wantLines := readJSONL(t, readFile(t, want.FilePath))
			_, gotLines := readJSONL(t, readFile(t, got.FilePath))
			assert.Equal(t, wantLines, gotLines, "the same records")
		})
	}
}
func TestResourcesThroughProxy(t *testing.T) {
	rem := startRemote(t)
	p, off := startProxy(t, rem.http.URL, proxy.Config{})
	mcpgo.AddResources(p.Server(), off) // a no-op once ServerOption registers them
	c := connect(t, p.Server())

	d := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 200, "detail": "full"}))
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "lro://files/" + filepath.Base(d.FilePath)
	res, err := c.ReadResource(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	assert.Equal(t, string(readFile(t, d.FilePath)), res.Contents[0].(mcp.TextResourceContents).Text)
}
