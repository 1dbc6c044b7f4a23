package lro_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copiesChildEnv makes this test, run again, a server that makes a local
// copy and waits to be killed.
const copiesChildEnv = "LRO_TEST_COPIES_CHILD"

// queryFromMemFS makes a server answer an lro_extract query of a file of
// its MemFS: a local copy is made for the workers.
func queryFromMemFS(t *testing.T) {
	_, c, path := memFSServer(t)
	res := extract(t, c, map[string]any{"file_path": path, "recipe": 6})
	require.False(t, res.IsError, textOf(t, res, 0))
}

// copyDirs returns the directories of local copies in dir.
func copyDirs(t *testing.T, dir string) []string {
	matches, err := filepath.Glob(filepath.Join(dir, "lro-extract-copies-*"))
	require.NoError(t, err)
	return matches
}

// TestLocalCopiesOfAKilledServerAreSwept reproduces issue 30's leak: the
// local copies of a store's files that a killed server made stayed in
// TMPDIR for good (3 kills: 87 MB). The next server to make copies
// removes those of servers that are gone.
func TestLocalCopiesOfAKilledServerAreSwept(t *testing.T) {
	if os.Getenv(copiesChildEnv) != "" {
		queryFromMemFS(t)
		os.Stdout.WriteString("READY\n")
		time.Sleep(time.Minute) // killed before
		return
	}
	if runtime.GOOS == "windows" {
		t.Skip("no signals to kill with")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLocalCopiesOfAKilledServerAreSwept$", "-test.count=1")
	cmd.Env = append(os.Environ(), copiesChildEnv+"=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, _ := bufio.NewReader(out).ReadString('\n')
	require.Equal(t, "READY", strings.TrimSpace(line), "the child made its copy")
	left := copyDirs(t, tmp)
	require.Len(t, left, 1, "the child's copies")
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	require.Equal(t, left, copyDirs(t, tmp), "a killed server leaves its copies")
	var bytes int64
	filepath.Walk(left[0], func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			bytes += fi.Size()
		}
		return nil
	})
	t.Logf("the killed server left %d bytes of copies in %s", bytes, filepath.Base(left[0]))

	queryFromMemFS(t) // a new server makes its copies
	for _, dir := range left {
		assert.NoDirExists(t, dir, "the killed server's copies are swept")
	}
}
