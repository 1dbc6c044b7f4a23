//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStdioBothGenerations: the official Go SDK client at its default
// protocol (2026-07-28: server/discover and per-request _meta, no
// initialize) and pinned to 2025-11-25 (initialize), through
// `lro-proxy -- memoryserver` on each SDK: the proxy announces itself in
// whatever the generation carries, so the server returns full results
// and the proxy alone offloads them, into its own directory.
func TestStdioBothGenerations(t *testing.T) {
	for _, sdk := range []string{"mcp-go", "official"} {
		for _, version := range []string{"", "2025-11-25"} {
			t.Run(fmt.Sprintf("server=%s client=%q", sdk, version), func(t *testing.T) {
				local := t.TempDir()
				cmd := exec.Command(proxyBin, "--", serverBin, "-sdk", sdk)
				cmd.Env = append(os.Environ(), "ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR="+local)
				cmd.Stderr = os.Stderr
				checkGenerations(t, cmd, version, local)
			})
		}
	}
}

// checkGenerations connects the official Go SDK client at protocol
// version (empty: its default) to the proxy started by cmd, and checks
// that a large result comes offloaded by the proxy into local, and that
// lro_extract reads it.
func checkGenerations(t *testing.T, cmd *exec.Cmd, version, local string) {
	t.Helper()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, opts)
	require.NoError(t, err)
	defer cs.Close()
	if version != "" {
		require.Equal(t, version, cs.InitializeResult().ProtocolVersion)
	}
	d := descriptorOf(t, call(t, cs, "recall_memories", map[string]any{"query": "deployment", "limit": 200, "detail": "full"}))
	assert.Equal(t, local, filepath.Dir(d.FilePath), "offloaded by the proxy, into its directory")
	assert.Equal(t, 200, d.Summary.Count)
	res := call(t, cs, "lro_extract", map[string]any{"file_path": d.FilePath, "recipe": 6})
	assert.False(t, res.IsError, text(res))
	assert.Contains(t, text(res), `"count":`)
}
