package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notifications is what a client of the official Go SDK got of the
// server's notifications, each as JSON again.
type notifications struct {
	mu       sync.Mutex
	log      []*mcp.LoggingMessageParams
	progress []*mcp.ProgressNotificationParams
	got      chan struct{} // a message of each kind came
}

func (n *notifications) options() *mcp.ClientOptions {
	n.got = make(chan struct{})
	check := func() {
		if len(n.log) == 1 && len(n.progress) == 1 {
			close(n.got)
		}
	}
	return &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.log = append(n.log, req.Params)
			check()
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.progress = append(n.progress, req.Params)
			check()
		},
	}
}

// check asserts that the client got a log message and a progress
// notification of about 2 MB each, each cut within limit and marked.
func (n *notifications) check(t *testing.T, limit int) {
	t.Helper()
	select {
	case <-n.got:
	case <-time.After(time.Minute): // a hang, not a bound
		t.Fatal("the client did not get both notifications")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	logged, err := json.Marshal(n.log[0])
	require.NoError(t, err)
	progressed, err := json.Marshal(n.progress[0])
	require.NoError(t, err)
	t.Logf("of 2 MB each, the client got a log message of %d B, a progress notification of %d B (limit %d B)", len(logged), len(progressed), limit)
	assert.LessOrEqual(t, len(logged), limit)
	assert.LessOrEqual(t, len(progressed), limit)
	assert.Equal(t, mcp.LoggingLevel("info"), n.log[0].Level)
	assert.Equal(t, "big", n.log[0].Logger)
	data, _ := n.log[0].Data.(string)
	assert.True(t, strings.HasPrefix(data, `worker 7 said "done"`), "%.60s", data)
	assert.Contains(t, data, "cut by lro-proxy")
	assert.NotNil(t, n.log[0].Meta["io.github.mcplro/cut"], "marked as cut")
	assert.Equal(t, "tok-cut", n.progress[0].ProgressToken)
	assert.Equal(t, float64(1), n.progress[0].Progress)
	assert.Contains(t, n.progress[0].Message, "cut by lro-proxy")
	assert.NotNil(t, n.progress[0].Meta["io.github.mcplro/cut"], "marked as cut")
}

// callNotify starts the proxy cmd under the official Go SDK's client and
// calls the tool notify with a progress token, its notifications kept in n.
func callNotify(t *testing.T, cmd *exec.Cmd, n *notifications) {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, n.options()).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "notify", Arguments: map[string]any{}}
	params.SetProgressToken("tok-cut")
	_, err = cs.CallTool(t.Context(), params)
	require.NoError(t, err)
}

// TestNotificationsCut reproduces issue 41's notifications: a server's
// notifications/message of 2 MB, and a notifications/progress with a
// message of 2 MB, reached the client whole through lro-proxy, on both
// paths. Each reaches the official Go SDK's client cut within 64 KiB, or
// within -max-notification-bytes, and marked as cut.
func TestNotificationsCut(t *testing.T) {
	const size = 2_000_000
	for _, c := range []struct {
		args  []string
		limit int
	}{{nil, 64 << 10}, {[]string{"-max-notification-bytes", "4KiB"}, 4 << 10}} {
		t.Run("command/limit="+strconv.Itoa(c.limit), func(t *testing.T) {
			self, err := os.Executable()
			require.NoError(t, err)
			cmd := exec.Command(proxyBin, append(c.args, "--", self)...)
			cmd.Env = append(os.Environ(), bigServerEnv+"="+strconv.Itoa(size), "ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR="+t.TempDir())
			cmd.Stderr = os.Stderr
			var n notifications
			callNotify(t, cmd, &n)
			n.check(t, c.limit)
		})
		t.Run("remote/limit="+strconv.Itoa(c.limit), func(t *testing.T) {
			var n notifications
			remote := bigNotifier(t, size, &n)
			callNotify(t, proxyCmd(remote, t.TempDir(), c.args...), &n)
			n.check(t, c.limit)
		})
	}
}

// bigNotifier serves, on streamable HTTP, an mcp-go server whose tool
// "notify" sends a log message of size bytes of data and a progress
// notification with a message of size bytes, then answers once the
// client of n got both (mcp-go's server may drop the notifications still
// queued when a handler returns); its tool "meta" answers "ok" with size
// bytes of _meta.
func bigNotifier(t *testing.T, size int, n *notifications) string {
	s := server.NewMCPServer("big", "1", server.WithLogging())
	filler := strings.Repeat(`worker 7 said "done" after a long while; `, size/41+1)
	s.AddTool(mcpgo.NewTool("notify"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		srv := server.ServerFromContext(ctx)
		_ = srv.SendNotificationToClient(ctx, "notifications/message", map[string]any{"level": "info", "logger": "big", "data": filler})
		if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
			_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{"progressToken": m.ProgressToken, "progress": 1, "total": 2, "message": filler})
		}
		select {
		case <-n.got:
		case <-ctx.Done():
		}
		return mcpgo.NewToolResultText("ok"), nil
	})
	s.AddTool(mcpgo.NewTool("meta"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res := mcpgo.NewToolResultText("ok")
		res.Meta = &mcpgo.Meta{AdditionalFields: map[string]any{"example.com/trace": filler}}
		return res, nil
	})
	h := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(h.Close)
	return h.URL
}
