package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/testmcp"
)

// churningRemote is a hostile remote: it renames all its tools (each about
// toolBytes large) before every tools/list it answers, and announces
// tools/list_changed in a loop while running.
type churningRemote struct {
	mcp   *server.MCPServer
	http  *httptest.Server
	lists atomic.Int32 // tools/list requests answered
	gen   atomic.Int64 // the generation of the tools listed last
	n     int
	size  int
	stop  chan struct{}
	done  sync.WaitGroup
}

func startChurning(t testing.TB, n, toolBytes int) *churningRemote {
	t.Helper()
	r := &churningRemote{n: n, size: toolBytes, stop: make(chan struct{})}
	r.mcp = server.NewMCPServer("churning", "1", server.WithToolCapabilities(true))
	r.rename()
	inner := server.NewStreamableHTTPServer(r.mcp)
	r.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			body, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"method":"tools/list"`)) {
				r.lists.Add(1)
				r.rename()
			}
		}
		inner.ServeHTTP(w, req)
	}))
	r.done.Add(1)
	go func() { // list_changed, as fast as the server sends it
		defer r.done.Done()
		for {
			select {
			case <-r.stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			r.mcp.SendNotificationToAllClients(mcp.MethodNotificationToolsListChanged, nil)
		}
	}()
	t.Cleanup(r.close)
	return r
}

func (r *churningRemote) close() {
	select {
	case <-r.stop:
		return
	default:
	}
	close(r.stop)
	r.done.Wait()
	r.http.CloseClientConnections()
	r.http.Close()
}

// rename replaces the remote's tools by n new ones.
func (r *churningRemote) rename() {
	g := r.gen.Add(1)
	tools := make([]server.ServerTool, r.n)
	for i := range tools {
		tools[i] = server.ServerTool{
			Tool: mcp.NewTool(fmt.Sprintf("tool_%d_%d", g, i), mcp.WithDescription(strings.Repeat("d", r.size))),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			},
		}
	}
	r.mcp.SetTools(tools...)
}

func churnOffloader(t testing.TB) *lro.Offloader {
	cfg := lro.DefaultConfig()
	cfg.OutputDir = t.TempDir()
	off, err := lro.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { off.Close() })
	return off
}

// frontClient connects an in-process client to the proxy and counts the
// tools/list_changed notifications it receives.
func frontClient(t testing.TB, p *Proxy) *atomic.Int32 {
	t.Helper()
	c, err := client.NewInProcessClient(p.Server())
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { c.Close() })
	var n atomic.Int32
	c.OnNotification(func(m mcp.JSONRPCNotification) {
		if m.Method == mcp.MethodNotificationToolsListChanged {
			n.Add(1)
		}
	})
	_, err = c.Initialize(context.Background(), mcp.InitializeRequest{})
	require.NoError(t, err)
	return &n
}

// TestProxyChurningRemote: a remote that renames its 200 tools on every
// listing and announces list_changed without pause gets at most one
// listing a second (minResync), so its clients get at most one
// tools/list_changed a second, and the proxy serves the current listing
// only.
func TestProxyChurningRemote(t *testing.T) {
	t.Parallel() // it mostly waits (for the pacer, a timeout), and shares nothing
	rem := startChurning(t, 200, 4<<10)
	const maxTools = 1 << 20 // a listing is 0.85 MiB
	p, err := New(churnOffloader(t), Config{Remote: rem.http.URL, Logger: slog.New(slog.DiscardHandler), MaxToolsBytes: maxTools})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	notes := frontClient(t, p)

	const run = 3 * time.Second
	start := time.Now()
	lists0 := rem.lists.Load()
	time.Sleep(run)
	elapsed := time.Since(start)
	rem.close()
	lists := rem.lists.Load() - lists0
	p.syncMu.Lock()
	conns := int32(p.retired) // each replaced connection was followed by a new one
	p.syncMu.Unlock()
	// At most one listing a second that the remote asks for, and two for
	// each new connection (the protocol probe and its listing), which
	// come no faster than the watcher's backoff.
	limit := int32(elapsed/minResync) + 2
	t.Logf("in %s: %d listings, %d tools/list_changed to the client, %d connections replaced", elapsed, lists, notes.Load(), conns)
	assert.LessOrEqual(t, lists, limit+2*conns, "tools/list requests in %s", elapsed)
	assert.LessOrEqual(t, notes.Load(), limit+conns, "tools/list_changed notifications to the client in %s", elapsed)
	assert.GreaterOrEqual(t, lists, int32(2), "the proxy follows the changes")

	served := 0
	for name := range p.Server().ListTools() {
		if strings.HasPrefix(name, "tool_") {
			served++
		}
	}
	assert.Equal(t, 200, served, "the proxy serves one listing")

	// What the proxy keeps: the current listing, and mcp-go's client's
	// account of it, which a new connection starts again.
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	assert.Len(t, p.served, 200)
	assert.Nil(t, p.refused)
	assert.GreaterOrEqual(t, p.retired, 1, "the connection was replaced when its client had kept too much")
	p.mu.Lock()
	tr := p.tr
	p.mu.Unlock()
	tr.mu.Lock()
	retired, kept := tr.retired, tr.knownBytes
	tr.mu.Unlock()
	if !retired {
		assert.LessOrEqual(t, kept, int64(2*maxTools), "what the current connection's client keeps")
	}
}

// TestProxyRefusesLargeListing: a listing larger than MaxToolsBytes is
// refused with an error naming the limit; at the start New fails, later the
// proxy keeps serving the listing it had.
func TestProxyRefusesLargeListing(t *testing.T) {
	t.Parallel() // it mostly waits (for the pacer, a timeout), and shares nothing
	rem := startHostileTools(t, 10, 1<<10)
	_, err := New(churnOffloader(t), Config{Remote: rem.http.URL, MaxToolsBytes: 8 << 10})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tool listing is larger than the proxy's limit of 8 KiB (MaxToolsBytes)")

	var logs testmcp.SyncBuffer
	p, err := New(churnOffloader(t), Config{Remote: rem.http.URL, MaxToolsBytes: 16 << 10, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	require.Len(t, p.Server().ListTools(), 10)
	rem.setTools(20, 1<<10) // 20 KiB: too large
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "tool listing is too large") }, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, logs.String(), "MaxToolsBytes")
	assert.Len(t, p.Server().ListTools(), 10, "the previous listing is kept")
	_, ok := p.Server().ListTools()["tool_0_0"]
	assert.True(t, ok)
	rem.setTools(5, 1<<10)
	require.Eventually(t, func() bool { return len(p.Server().ListTools()) == 5 }, 10*time.Second, 10*time.Millisecond, "a listing within the limit is served again")
	assert.Equal(t, 1, strings.Count(logs.String(), "tool listing is too large"), "said once while it lasts")
}

// hostileTools is a remote whose tools the test sets.
type hostileTools struct {
	mcp  *server.MCPServer
	http *httptest.Server
	gen  int
}

func startHostileTools(t testing.TB, n, size int) *hostileTools {
	r := &hostileTools{mcp: server.NewMCPServer("tools", "1", server.WithToolCapabilities(true))}
	r.setTools(n, size)
	r.http = httptest.NewServer(server.NewStreamableHTTPServer(r.mcp))
	t.Cleanup(func() { r.http.CloseClientConnections(); r.http.Close() })
	return r
}

func (r *hostileTools) setTools(n, size int) {
	tools := make([]server.ServerTool, n)
	for i := range tools {
		tools[i] = server.ServerTool{
			Tool: mcp.NewTool(fmt.Sprintf("tool_%d_%d", r.gen, i), mcp.WithDescription(strings.Repeat("d", size))),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			},
		}
	}
	r.gen++
	r.mcp.SetTools(tools...)
}

// TestProxyChurningRemoteMemoryBound: what the proxy keeps of a churning
// remote's listings does not grow with time. (Not under -race, which
// changes what memory is used.)
func TestProxyChurningRemoteMemoryBound(t *testing.T) {
	testenv.SkipUnlessFull(t) // TestProxyChurningRemote proves the churn is survived
	if raceEnabled {
		t.Skip("memory is not measured under -race")
	}
	rem := startChurning(t, 200, 4<<10)
	p, err := New(churnOffloader(t), Config{Remote: rem.http.URL, Logger: slog.New(slog.DiscardHandler), MaxToolsBytes: 1 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	frontClient(t, p)

	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	time.Sleep(time.Second)
	before := heap()
	time.Sleep(4 * time.Second)
	rem.close()
	after := heap()
	t.Logf("heap: %d MiB after 1 s, %d MiB 4 s later; %d listings", before>>20, after>>20, rem.lists.Load())
	// A listing is 200 x 4 KiB = 0.85 MiB; the proxy, its front server
	// and mcp-go's client each hold at most about two of them at once (a
	// connection whose client kept more than 2 MiB is replaced).
	assert.Less(t, int64(after)-int64(before), int64(16<<20), "the heap grew by %d MiB", (int64(after)-int64(before))>>20)
}
