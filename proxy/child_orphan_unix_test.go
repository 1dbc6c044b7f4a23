//go:build unix

package proxy

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	hostileStarts["hostile-orphan"] = orphanServer
	hostileStarts["hostile-sleeper"] = sleeper
}

// orphanServer starts a grandchild, in the server's process group, that
// ignores SIGTERM and writes its pid to $LRO_PROXY_ORPHAN_PID, then
// serves as hostileServer does; "hostile-sleeper" is that grandchild.
func orphanServer() {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "LRO_PROXY_FAKE_SERVER=hostile-sleeper")
	if err := cmd.Start(); err != nil {
		os.Exit(5)
	}
	// Not waited for: the server exits first, and leaves it behind.
}

// sleeper ignores SIGTERM, writes its pid to $LRO_PROXY_ORPHAN_PID and
// sleeps, then exits.
func sleeper() {
	signal.Ignore(syscall.SIGTERM)
	writePID()
	time.Sleep(time.Hour)
	os.Exit(0)
}

// writePID writes the process's pid to $LRO_PROXY_ORPHAN_PID, whole.
func writePID() {
	path := os.Getenv("LRO_PROXY_ORPHAN_PID")
	tmp := path + ".tmp"
	_ = os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o600)
	_ = os.Rename(tmp, path)
}

// TestChildGroupEndedAfterServerExits: a grandchild of the server that
// ignores SIGTERM does not outlive the proxy, whether the client
// disconnects, the proxy is closed (as lro-proxy is on SIGTERM), or the
// server exits by itself: the proxy kills the server's process group
// after the grace even when the server itself has exited. Before, the
// grandchild outlived the proxy in all three (re-parented to PID 1);
// after, it is killed the grace after SIGTERM, before Serve returns (a
// short grace here: the grandchild is killed whatever its length).
func TestChildGroupEndedAfterServerExits(t *testing.T) {
	for _, how := range []string{"client disconnects", "proxy closed", "server exits"} {
		t.Run(strings.ReplaceAll(how, " ", "_"), func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "orphan.pid")
			t.Setenv("LRO_PROXY_ORPHAN_PID", pidFile)
			c := startChild(t, "hostile-orphan", Config{StopGrace: 100 * time.Millisecond})
			pid := orphanPID(t, pidFile)
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			require.True(t, running(pid), "the grandchild runs")
			switch how {
			case "client disconnects":
				c.in.Close()
			case "proxy closed":
				c.proxy.Close()
			case "server exits":
				c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exit","arguments":{}}}`)
			}
			select {
			case <-c.done:
			case <-time.After(30 * time.Second):
				t.Fatal("Serve did not return")
			}
			// Killed before Serve returns: dead as soon as the kernel
			// has delivered SIGKILL.
			for i := 0; i < 1000 && running(pid); i++ {
				time.Sleep(10 * time.Millisecond)
			}
			assert.False(t, running(pid), "the server's grandchild, which ignores SIGTERM, outlived Serve")
		})
	}
}

// orphanPID waits for the grandchild to write its pid.
func orphanPID(t *testing.T, path string) int {
	t.Helper()
	for range 1000 {
		if b, err := os.ReadFile(path); err == nil {
			pid, err := strconv.Atoi(string(b))
			require.NoError(t, err)
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the grandchild did not start")
	return 0
}

// running reports whether the process pid exists and is not a zombie
// (one that no parent has reaped yet is dead all the same).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err) // no /proc here: kill says it runs
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
