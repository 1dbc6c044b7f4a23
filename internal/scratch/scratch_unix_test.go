//go:build unix

package scratch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepByLockNotPID: a directory is kept while its lock is held and
// removed once none is, whatever its PID says: one named for PID 1,
// which always runs (a PID reused), is removed when no process holds its
// lock; this process's own, named for its PID, is kept because it holds
// the lock, also against a sweep of this same process.
func TestSweepByLockNotPID(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	const prefix = "lro-test-bylock-"
	mine, err := Dir(prefix)
	require.NoError(t, err)
	orphan := filepath.Join(tmp, prefix+"pid1-lk42")
	require.NoError(t, os.Mkdir(orphan, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(orphan, "copy"), nil, 0o600))

	swept.Delete(tmp + "\x00" + prefix)
	sweepScratch(prefix)
	assert.NoDirExists(t, orphan, "no process holds its lock: its PID runs, but is another process's")
	assert.DirExists(t, mine, "held by this process")

	// Released, it is anyone's to sweep.
	Release(mine)
	swept.Delete(tmp + "\x00" + prefix)
	sweepScratch(prefix)
	assert.NoDirExists(t, mine)
}
