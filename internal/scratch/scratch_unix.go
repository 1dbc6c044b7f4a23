//go:build unix

package scratch

import (
	"errors"
	"os"
	"syscall"
)

// processGone reports whether no process pid runs. A process of another
// user answers EPERM: it runs.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// ownedDir reports whether dir is a directory (not a link to one) of this
// process's user: another user's is not ours to remove.
func ownedDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
