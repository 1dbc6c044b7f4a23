//go:build unix

package scratch

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// processGone reports whether no process pid runs, for a directory of an
// older version, which has no lock. A process of another user answers
// EPERM: it runs.
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

// dirLock is an exclusive flock(2) on a directory: the kernel lets it go
// when its holder exits, however it ends, and it holds across PID
// namespaces of one kernel. Both the maker of a directory (Dir) and a
// sweep take it without waiting.
type dirLock struct{ fd int }

// lockDir opens dir and takes its lock. When own is set, dir was just made
// by this process: the lock is kept only if dir is still that directory,
// not removed meanwhile by a sweep that took the lock first.
func lockDir(dir string, own bool) (dirLock, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return dirLock{}, err
	}
	l := dirLock{fd}
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err == nil && own {
		err = sameDir(fd, dir)
	}
	if err != nil {
		l.unlock()
		return dirLock{}, err
	}
	return l, nil
}

// sameDir reports an error unless the path dir names the directory open
// as fd.
func sameDir(fd int, dir string) error {
	var open, now syscall.Stat_t
	if err := syscall.Fstat(fd, &open); err != nil {
		return err
	}
	if err := syscall.Lstat(dir, &now); err != nil {
		return err
	}
	if open.Dev != now.Dev || open.Ino != now.Ino {
		return fmt.Errorf("%s was replaced", dir)
	}
	return nil
}

// unlock lets the lock go (closing its descriptor does).
func (l dirLock) unlock() { syscall.Close(l.fd) }
