//go:build unix

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/internal/e2e"
)

// startEverythingHTTP starts the reference "everything" server on
// streamable HTTP and returns its endpoint.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	bin := e2e.NodeBin(t, "mcp-server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		require.True(t, time.Now().Before(deadline), "server-everything did not listen")
		time.Sleep(20 * time.Millisecond)
	}
	return "http://" + addr + "/mcp"
}

// TestRemoteEverythingClientFeatures: the remote's requests to the client
// (roots, sampling, elicitation), through `lro-proxy -remote` in front of
// server-everything on streamable HTTP, reach the client and come back,
// each as a direct connection gets it.
func TestRemoteEverythingClientFeatures(t *testing.T) {
	ts := e2e.TSClient(t)
	url := startEverythingHTTP(t)
	roots := []string{"file:///tmp/lro-root-a"}
	steps := []e2e.Step{
		e2e.CallTool("get-roots-list", nil),
		e2e.CallTool("trigger-sampling-request", map[string]any{"prompt": "tell me", "maxTokens": 10}),
		e2e.CallTool("trigger-elicitation-request", nil),
	}
	direct := ts.RunHTTPFeatures(t, url, "direct", roots, steps)
	proxied := ts.RunStdioFeatures(t, "through-proxy", roots, proxyBin, []string{"-remote", url}, steps)
	for i, want := range []string{"lro-root-a", "sampled: ", "accept"} {
		require.True(t, direct[i].OK, "direct %s: %s", steps[i].Name, direct[i].Error)
		assert.Contains(t, string(direct[i].Result), want, "direct %s", steps[i].Name)
		require.True(t, proxied[i].OK, "through the proxy %s: %s", steps[i].Name, proxied[i].Error)
		assert.Contains(t, string(proxied[i].Result), want, "through the proxy %s", steps[i].Name)
	}
}

// TestRemoteEverythingThroughProxy compares every feature of the
// reference "everything" server on streamable HTTP through
// `lro-proxy -remote` with a direct connection, as
// TestStdioEverythingThroughProxy does over stdio: prompts, resources,
// templates, completions and reads as JSON, as the remote sent them.
func TestRemoteEverythingThroughProxy(t *testing.T) {
	ts := e2e.TSClient(t)
	url := startEverythingHTTP(t)
	steps := everythingSteps()
	roots := []string{"file:///tmp/lro-root-a"}
	direct := ts.RunHTTPFeatures(t, url, "direct", roots, steps)
	proxied := ts.RunStdioFeatures(t, "through-proxy", roots, proxyBin, []string{"-remote", url}, steps)
	compareEverything(t, steps, direct, proxied, nil)
}
