//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProxyEndsWhatTheServerLeft: lro-proxy -- COMMAND, whose server
// leaves a child that ignores SIGTERM, leaves nothing behind when its
// client disconnects or it gets SIGTERM: the server's process group is
// killed after the grace even though the server itself exited at once.
// Before, the child outlived the proxy in both (re-parented to PID 1).
// (A proxy killed with SIGKILL ends nothing itself: see the README.)
func TestProxyEndsWhatTheServerLeft(t *testing.T) {
	for _, how := range []string{"client EOF", "SIGTERM"} {
		t.Run(strings.ReplaceAll(how, " ", "_"), func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "left.pid")
			// The server: a child that ignores SIGTERM (sleep inherits the
			// ignored signal), then cat, which ends with its stdin.
			script := `sh -c 'trap "" TERM; echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 600' left "$1" & exec cat >/dev/null`
			// A short grace: the child is killed whatever its length.
			cmd := exec.Command(proxyBin, "-stop-grace", "100ms", "--", "sh", "-c", script, "server", pidFile)
			cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			pid := readPid(t, pidFile)
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if how == "SIGTERM" {
				require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			} else {
				stdin.Close()
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("lro-proxy did not exit")
			}
			// Killed before the proxy exits: gone once the kernel has
			// delivered SIGKILL.
			requireEnded(t, pid, "after lro-proxy exited ("+how+")")
		})
	}
}
