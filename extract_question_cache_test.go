package lro_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/require"
)

// TestExtractQuestionAnswerKept: a question asked again of a file is
// answered as it was the first time, and as a server that keeps nothing
// (CacheBytes negative) answers it; a file replaced at the same path
// (another inode, as a new publication would be) is answered with its
// own records, not the answer kept (issue 40.6: the answers are kept by
// the file's identity).
func TestExtractQuestionAnswerKept(t *testing.T) {
	t.Parallel()
	if !lro.ExtractWorkersSupported() {
		t.Skip("no worker processes on this platform")
	}
	dir := t.TempDir()
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir })
	o.Host().ExtractToolDefinition()
	plain := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir }, lro.WithExtractLimits(lro.ExtractLimits{CacheBytes: -1}))
	plain.Host().ExtractToolDefinition()
	offload := func(n int) string { return offloadMemories(t, o, n) }
	path := offload(600)
	ask := func(o *lro.Offloader) string {
		t.Helper()
		text, err := o.Extract(context.Background(), map[string]any{"file_path": path,
			"group_by": "memory_type", "aggregate": map[string]any{"op": "sum", "field": "provenance.confidence"}})
		require.NoError(t, err)
		return text
	}
	first := ask(o)
	for range 3 {
		require.Equal(t, first, ask(o))
	}
	require.Equal(t, ask(plain), first, "the same answer as computed without caches")

	// Another file in its place: written beside it, renamed over it.
	other := offload(300)
	data, err := os.ReadFile(other)
	require.NoError(t, err)
	tmp := filepath.Join(dir, "replacing.tmp")
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
	replaced := ask(o)
	require.NotEqual(t, first, replaced, "the new file's answer")
	require.Equal(t, ask(plain), replaced)
}
