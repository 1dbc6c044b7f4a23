//go:build linux

package scratch

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv makes this test binary, run again, a process that uses the
// package: "hold" makes a directory of testPrefix, prints its path and
// waits for its stdin to close, then exits without removing it, as a
// killed server would; "sweep" makes one (sweeping first), prints its
// path, and exits.
const childEnv = "LRO_TEST_SCRATCH_CHILD"

const testPrefix = "lro-test-scratch-"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		dir, err := Dir(testPrefix)
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		fmt.Println("DIR", dir)
		if mode == "hold" {
			io.Copy(io.Discard, os.Stdin)
		}
		os.Exit(0) // the directory stays, as a killed process leaves it
	}
	os.Exit(m.Run())
}

// unshareArgs returns the command that runs a program in a PID namespace
// of its own, or skips the test, saying why, where the machine allows
// none.
func unshareArgs(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is not installed: no PID namespaces to test across")
	}
	for _, args := range [][]string{
		{"unshare", "--pid", "--fork", "--mount-proc"},
		{"unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc"},
	} {
		if exec.Command(args[0], append(args[1:], "true")...).Run() == nil {
			return args
		}
	}
	t.Skip("this machine allows no PID namespace (unshare --pid --fork fails, also in a user namespace): the test needs one")
	return nil
}

// atPID runs a program ("$0") as the process of PID pid, or about, of a
// new PID namespace: its shell, PID 1, sets the namespace's last PID, or
// forks until it is reached where it may not.
const atPID = `echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid 2>/dev/null ||
while [ $(sh -c 'echo $$') -lt $(($1 - 2)) ]; do :; done
"$0"`

// inNamespace starts this binary in a PID namespace of its own, in mode,
// with TMPDIR set to tmp, as the namespace's process pid, and returns the
// directory it made, the command, and the pipe it waits on in mode hold.
func inNamespace(t *testing.T, unshare []string, tmp, mode string, pid int) (string, *exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(unshare[0], append(unshare[1:], "sh", "-c", atPID, os.Args[0], fmt.Sprint(pid))...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, childEnv+"="+mode)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "DIR ")
	require.True(t, ok, "the child in mode %s answered %q", mode, line)
	return dir, cmd, stdin
}

// TestSweepAcrossPIDNamespaces reproduces issue 38's lost copies: two
// servers sharing TMPDIR in different PID namespaces, the second one's
// sweep removed the first one's live directory, whose PID it could not
// see (kill(pid, 0) answered ESRCH). A lock the living process holds
// tells instead: the live directory stays, and once its process is gone
// the next sweep, in a third namespace, removes it.
func TestSweepAcrossPIDNamespaces(t *testing.T) {
	unshare := unshareArgs(t)
	tmp := t.TempDir()
	// The first process's PID is one no process has in the others'
	// namespaces, where a handful run.
	live, holder, stdin := inNamespace(t, unshare, tmp, "hold", 300)
	require.Equal(t, tmp, filepath.Dir(live))
	require.NoError(t, os.WriteFile(filepath.Join(live, "copy.jsonl"), []byte("{}\n"), 0o600))
	t.Logf("the first process made %s", filepath.Base(live))

	other, _, _ := inNamespace(t, unshare, tmp, "sweep", 2)
	t.Logf("the second, in another PID namespace, made %s", filepath.Base(other))
	assert.FileExists(t, filepath.Join(live, "copy.jsonl"), "the second process's sweep keeps the first one's live directory")

	stdin.Close()
	require.NoError(t, holder.Wait())
	assert.DirExists(t, live, "a process that ends without cleaning up leaves its directory")
	third, _, _ := inNamespace(t, unshare, tmp, "sweep", 2)
	assert.NoDirExists(t, live, "the next sweep removes the directory of a process that is gone")
	assert.NoDirExists(t, other, "and that of the second, gone too")
	assert.DirExists(t, third)
}
