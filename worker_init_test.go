package lro_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildProgram builds the package pkg of this module into dir and returns
// the executable's path; it skips the test where no go command runs.
func buildProgram(t testing.TB, pkg, dir string) string {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build", pkg)
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(gocmd, "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

// TestWorkerRunsNoHostInit reproduces issue 22's host program: its
// package initpkg has an init function with effects outside its process
// (here a line appended to a file; a PID file or a log truncated in the
// issue). Run again as its own workers, the program ran it once more in
// each worker (Go runs initpkg's init before lro's worker hook); with
// lro-worker beside the program, or named by LRO_WORKER_PATH, it runs
// once, in the server only, and the queries answer alike.
func TestWorkerRunsNoHostInit(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no workers")
	}
	if testing.Short() {
		t.Skip("builds two programs")
	}
	root := t.TempDir()
	host := buildProgram(t, "./testdata/inithost", filepath.Join(root, "host"))
	worker := buildProgram(t, "./cmd/lro-worker", filepath.Join(root, "bin"))

	run := func(t *testing.T, exe string, env ...string) (answers string, inits int) {
		count := filepath.Join(t.TempDir(), "count")
		cmd := exec.Command(exe, t.TempDir())
		// No lro-worker on PATH but the one a case puts there.
		cmd.Env = append(os.Environ(), "PATH=/nonexistent", "LRO_WORKER_PATH=", "INITPKG_COUNT="+count)
		cmd.Env = append(cmd.Env, env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		b, err := os.ReadFile(count)
		require.NoError(t, err)
		return string(out), strings.Count(string(b), "init in")
	}
	const want = "\"record 0\"\n\"record 1\"\n"

	t.Run("the program run again", func(t *testing.T) {
		out, inits := run(t, host)
		assert.Equal(t, want, out)
		assert.GreaterOrEqual(t, inits, 3, "the server and each of its two workers ran initpkg's init: the cost the README states")
	})
	t.Run("lro-worker named by LRO_WORKER_PATH", func(t *testing.T) {
		out, inits := run(t, host, "LRO_WORKER_PATH="+worker)
		assert.Equal(t, want, out)
		assert.Equal(t, 1, inits, "only the server ran initpkg's init")
	})
	t.Run("lro-worker on PATH", func(t *testing.T) {
		out, inits := run(t, host, "PATH="+filepath.Dir(worker))
		assert.Equal(t, want, out)
		assert.Equal(t, 1, inits)
	})
	t.Run("lro-worker beside the program", func(t *testing.T) {
		beside := filepath.Join(filepath.Dir(host), "lro-worker")
		require.NoError(t, os.Link(worker, beside))
		out, inits := run(t, host)
		assert.Equal(t, want, out)
		assert.Equal(t, 1, inits)
	})
}
