package lro_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtractLostCopy reproduces issue 38's lost copy: the directory of
// a running server's local copies was removed from under it (another
// server's sweep, in another PID namespace), and from then on every
// lro_extract of a store's file failed: the call's file was nil, a panic
// that a host turned into an empty answer. Now a lost copy is made
// again, and its directory too; where it cannot be, the call is an error
// that says why.
func TestExtractLostCopy(t *testing.T) {
	if !lro.ExtractWorkersSupported() {
		t.Skip("no worker processes on this platform: no local copies")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, c, path := memFSServer(t)
	questions := []map[string]any{
		{"file_path": path, "recipe": 2},
		{"file_path": path, "grep": "cache"},
		{"file_path": path, "lines": "3-4"},
	}
	want := make([]string, len(questions))
	for i, q := range questions {
		res := extract(t, c, q)
		require.False(t, res.IsError, textOf(t, res, 0))
		want[i] = textOf(t, res, 0)
		require.NotEmpty(t, want[i])
	}
	dirs := copyDirs(t, tmp)
	require.Len(t, dirs, 1)

	for round := range 2 {
		for _, d := range copyDirs(t, tmp) {
			require.NoError(t, os.RemoveAll(d))
		}
		for i, q := range questions {
			res := extract(t, c, q)
			require.False(t, res.IsError, "round %d, %v: %s", round, q, textOf(t, res, 0))
			assert.Equal(t, want[i], textOf(t, res, 0), "round %d, %v", round, q)
		}
		assert.Len(t, copyDirs(t, tmp), 1, "the copy is made again, in a directory made again")
	}

	// Where no copy can be made, the answer is an error saying so.
	for _, d := range copyDirs(t, tmp) {
		require.NoError(t, os.RemoveAll(d))
	}
	t.Setenv("TMPDIR", filepath.Join(tmp, "gone"))
	res := extract(t, c, questions[0])
	require.True(t, res.IsError, "an answer without its copy: %q", textOf(t, res, 0))
	assert.Contains(t, textOf(t, res, 0), "cannot make a directory for local copies")

	// Offloader.Extract, which every host calls, the same.
	o, _, path := memFSServer(t)
	t.Setenv("TMPDIR", tmp)
	_, err := o.Extract(context.Background(), map[string]any{"file_path": path, "recipe": 2})
	require.NoError(t, err)
	for _, d := range copyDirs(t, tmp) {
		require.NoError(t, os.RemoveAll(d))
	}
	text, err := o.Extract(context.Background(), map[string]any{"file_path": path, "recipe": 2})
	require.NoError(t, err)
	assert.Equal(t, want[0], text)
}
