package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/mcplro/lro/proxy"
)

// heldFS is a store whose files cannot be created until release is
// called: an offload through it runs as long as its test wants, however
// fast the machine, so that it passes the second after which an offload
// reports progress.
type heldFS struct {
	*lrotest.MemFS
	held chan struct{}
	once sync.Once
}

func newHeldFS(t *testing.T) *heldFS {
	return &heldFS{MemFS: lrotest.NewMemFS(t.TempDir()), held: make(chan struct{})}
}

func (h *heldFS) release() { h.once.Do(func() { close(h.held) }) }

func (h *heldFS) Create(name string) (lro.File, error) {
	select {
	case <-h.held:
	case <-time.After(time.Minute): // a test that never releases it fails on its own
	}
	return h.MemFS.Create(name)
}

// heldOffloader is an Offloader over a heldFS.
func heldOffloader(t *testing.T) (*lro.Offloader, *heldFS) {
	fsys := newHeldFS(t)
	off, err := lro.New(lro.DefaultConfig(), lro.WithFS(fsys), lro.WithoutJanitor())
	require.NoError(t, err)
	t.Cleanup(func() { off.Close() })
	return off, fsys
}

// TestProxyOffloadProgress reproduces issue 42's "long work reports
// progress" through the proxy of a remote: an offload that takes past a
// second (its store held until the client has heard of it) sends the
// client, which sent a progress token, notifications/progress. (The
// proxy's local server has lro's middleware, which reports an offload's
// progress: this held before the test, which keeps it so.)
func TestProxyOffloadProgress(t *testing.T) {
	rem := startRemote(t)
	off, fsys := heldOffloader(t)
	p, err := proxy.New(off, proxy.Config{Remote: rem.http.URL, CallTimeout: 2 * time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	c := connect(t, p.Server())
	heard := hearProgress(c, fsys.release)
	req := mcp.CallToolRequest{}
	req.Params.Name = "recall_memories"
	req.Params.Arguments = map[string]any{"query": "", "limit": 200, "detail": "full"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-offload"}
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	descriptor(t, res)
	got := heard.all()
	require.NotEmpty(t, got, "the client heard of the offload")
	t.Logf("progress notifications of the offload: %d, the first %v", len(got), got[0])
	assert.Equal(t, "tok-offload", got[0]["progressToken"])
	assert.Contains(t, got[0]["message"], "recall_memories")
}

// TestChildOffloadProgress is TestProxyOffloadProgress through the proxy
// of a local server (Config.Command), whose client reads the proxy's
// output line by line.
func TestChildOffloadProgress(t *testing.T) {
	t.Setenv("LRO_PROXY_FAKE_SERVER", "records")
	off, fsys := heldOffloader(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	p, err := proxy.New(off, proxy.Config{Command: []string{exe}, Stderr: io.Discard, CallTimeout: 2 * time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	inR, in := io.Pipe()
	out, outW := io.Pipe()
	go func() { _ = p.Serve(context.Background(), inR, outW); outW.Close() }()
	t.Cleanup(func() { in.Close() })
	send := func(s string) { _, err := io.WriteString(in, s+"\n"); require.NoError(t, err) }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"records","arguments":{},"_meta":{"progressToken":"tok-child"}}}`)
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	var progress []map[string]any
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params map[string]any  `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		if m.Method == string(mcp.MethodNotificationProgress) {
			progress = append(progress, m.Params)
			fsys.release()
		}
		if string(m.ID) == "2" {
			assert.Contains(t, string(m.Result), `\"offloaded\":true`, "%.300s", m.Result)
			break
		}
	}
	t.Logf("progress notifications of the offload: %d", len(progress))
	require.NotEmpty(t, progress, "the client heard of the offload")
	assert.Equal(t, "tok-child", progress[0]["progressToken"])
	assert.True(t, strings.Contains(progress[0]["message"].(string), "records"), "%v", progress[0])
}
