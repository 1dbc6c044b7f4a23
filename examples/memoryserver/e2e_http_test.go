package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

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
			assert.Contains(t, metrics, `lro_offloads_total{operation="recall"} 1`)
			assert.Contains(t, metrics, `lro_offload_tokens_total{operation="recall"} `)
			assert.Contains(t, metrics, `lro_offload_duration_seconds_count{operation="recall"} 1`)
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
