//go:build unix

package extractworker

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenRefuses: Open reads only a regular file with one link, owned by
// this user, and never blocks.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	require.NoError(t, os.WriteFile(good, []byte("{}\n"), 0o600))
	f, id, err := Open(good)
	require.NoError(t, err)
	f.Close()
	assert.EqualValues(t, 3, id.Size)

	fifo := filepath.Join(dir, "fifo.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	start := time.Now()
	_, _, err = Open(fifo)
	assert.ErrorContains(t, err, "not a regular file")
	testenv.Within(t, time.Since(start), time.Second, "a FIFO with no writer does not block the open")

	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(good, link))
	_, _, err = Open(link)
	assert.ErrorContains(t, err, "a symbolic link")

	hard := filepath.Join(dir, "hard.jsonl")
	require.NoError(t, os.Link(good, hard))
	_, _, err = Open(hard)
	assert.ErrorContains(t, err, "has 2 links")
	require.NoError(t, os.Remove(hard))

	_, _, err = Open(dir)
	assert.ErrorContains(t, err, "not a regular file")

	if os.Getuid() == 0 {
		theirs := filepath.Join(dir, "theirs.jsonl")
		require.NoError(t, os.WriteFile(theirs, []byte("{}\n"), 0o600))
		require.NoError(t, os.Chown(theirs, 12345, 12345))
		_, _, err = Open(theirs)
		assert.ErrorContains(t, err, "owned by another user")
	}
}
