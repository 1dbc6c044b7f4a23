package proxy

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/internal/testenv"
)

func init() {
	hostileStarts["hostile-mortal-orphan"] = mortalOrphanServer
	hostileStarts["hostile-mortal-sleeper"] = func() {
		writePID()
		time.Sleep(time.Hour)
		os.Exit(0)
	}
}

// mortalOrphanServer is orphanServer with a grandchild that SIGTERM
// ends.
func mortalOrphanServer() {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "LRO_PROXY_FAKE_SERVER=hostile-mortal-sleeper")
	if err := cmd.Start(); err != nil {
		os.Exit(5)
	}
}

// TestChildZombiesAreNotWaitedFor: what the server left, ended by SIGTERM
// but not reaped (its parent, once the server exited, is a subreaper that
// does not reap: init in some containers, a proxy that is PID 1), is dead:
// the ending neither waits out the grace for it nor warns that it did not
// exit. Before, kill(2) counted the zombie: the client's disconnection
// took the whole grace, and logged "what the server left behind did not
// exit".
func TestChildZombiesAreNotWaitedFor(t *testing.T) {
	// The test process adopts the server's orphans, and reaps none until
	// the test ends.
	require.NoError(t, prctl(prSetChildSubreaper, 1))
	t.Cleanup(func() { _ = prctl(prSetChildSubreaper, 0) })
	pidFile := filepath.Join(t.TempDir(), "orphan.pid")
	t.Setenv("LRO_PROXY_ORPHAN_PID", pidFile)
	var log syncBuffer
	grace := 5 * time.Second
	c := startChild(t, "hostile-mortal-orphan", Config{StopGrace: grace, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	pid := orphanPID(t, pidFile)
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_, _ = syscall.Wait4(pid, nil, 0, nil)
	})
	start := time.Now()
	c.in.Close()
	select {
	case err := <-c.done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
	}
	took := time.Since(start)
	assert.False(t, running(pid), "the grandchild is dead")
	assert.NotContains(t, log.String(), "did not exit")
	testenv.Within(t, took, grace/2, "ending a server that left a zombie")
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// prctl calls prctl(2) with one argument.
func prctl(option, arg uintptr) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, option, arg, 0); errno != 0 {
		return errno
	}
	return nil
}
