package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testmcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPMetricsAndLimits: in -http mode the server counts its offloads
// at /metrics for Prometheus, and refuses a request body past its limit
// while it keeps serving.
func TestHTTPMetricsAndLimits(t *testing.T) {
	for _, sdk := range sdks {
		t.Run("server="+sdk, func(t *testing.T) {
			out := t.TempDir()
			url := startHTTP(t, out, "-sdk", sdk)
			cs, err := sdkClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
			require.NoError(t, err)
			defer cs.Close()
			res, err := callSDK(t, cs, "recall_memories", map[string]any{"query": "security", "limit": 200, "detail": "full"})
			require.NoError(t, err)
			d := sdkDescriptor(t, res)

			metrics := get(t, strings.TrimSuffix(url, "/mcp")+"/metrics")
			assert.Contains(t, metrics, "# TYPE lro_offloads_total counter")
			assert.Contains(t, metrics, `lro_offloads_total{operation="recall",tool="recall_memories"} 1`)
			assert.Contains(t, metrics, `lro_offload_tokens_total{operation="recall",tool="recall_memories"} `)
			assert.Contains(t, metrics, `lro_offload_duration_seconds_count{operation="recall",outcome="ok",tool="recall_memories"} 1`)
			// Buckets that fit a latency (issue 26.5): the offload lands
			// under a second, and the first bucket is half a millisecond.
			assert.Contains(t, metrics, `lro_offload_duration_seconds_bucket{operation="recall",outcome="ok",tool="recall_memories",le="0.0005"} `)
			assert.Contains(t, metrics, `lro_offload_duration_seconds_bucket{operation="recall",outcome="ok",tool="recall_memories",le="1"} 1`)
			assert.Greater(t, d.Summary.EstimatedTokens, 1600)

			// A valid initialize padded with spaces: answered with a little
			// padding, refused past the limit (without the limit it would
			// be read whole and answered).
			assert.Equal(t, http.StatusOK, postPadded(t, url, 1<<10))
			assert.GreaterOrEqual(t, postPadded(t, url, 64<<20), 400, "a 64 MiB body is refused")

			_, err = callSDK(t, cs, "list_memories", map[string]any{"limit": 3})
			assert.NoError(t, err, "the server keeps serving")
		})
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// postPadded posts an initialize request followed by pad spaces and
// returns the status, or 413 when the server closed the connection on it.
func postPadded(t *testing.T, url string, pad int) int {
	t.Helper()
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"padded","version":"1"}}}`)
	body := io.MultiReader(bytes.NewReader(init), bytes.NewReader(bytes.Repeat([]byte(" "), pad)))
	req, err := http.NewRequest(http.MethodPost, url, body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return http.StatusRequestEntityTooLarge
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestHTTPIdleSessionsEnd: a session whose client went away without ending
// it is ended after -session-idle (20,000 idle sessions held 328 MiB
// for good). The official SDK then refuses the session; mcp-go drops its
// state and logs it (and takes the id again as a new session). The two
// servers wait side by side.
func TestHTTPIdleSessionsEnd(t *testing.T) {
	t.Parallel() // it mostly waits
	for _, sdk := range sdks {
		t.Run("server="+sdk, func(t *testing.T) {
			t.Parallel()
			var log testmcp.SyncBuffer
			url := startHTTPLogging(t, &log, t.TempDir(), "-sdk", sdk, "-session-idle", "1s")
			post := func(session, body string) (*http.Response, error) {
				req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				if session != "" {
					req.Header.Set("Mcp-Session-Id", session)
				}
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				return resp, err
			}
			resp, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`)
			require.NoError(t, err)
			session := resp.Header.Get("Mcp-Session-Id")
			require.NotEmpty(t, session)
			_, err = post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			require.NoError(t, err)
			list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
			resp, err = post(session, list)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode, "the session serves while it is used")

			// Idle from here: a request would keep the session.
			swept := "Sweeping expired session session=" + session
			if sdk == "mcp-go" { // its sweeper, every second, logs the end
				require.Eventually(t, func() bool { return strings.Contains(log.String(), swept) },
					15*time.Second, 50*time.Millisecond, "the idle session was never ended")
				return
			}
			deadline := time.Now().Add(15 * time.Second)
			for {
				time.Sleep(1500 * time.Millisecond) // idle for longer than -session-idle
				resp, err = post(session, list)
				require.NoError(t, err)
				if resp.StatusCode == http.StatusNotFound {
					return // ended
				}
				require.True(t, time.Now().Before(deadline), "the idle session was never ended (status %d)", resp.StatusCode)
			}
		})
	}
}
