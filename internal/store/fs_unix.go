//go:build unix

package store

import (
	"fmt"
	"os"
	"syscall"
)

// oNonblock opens a file without waiting: a FIFO put in place of an
// offloaded file cannot hang a read.
const oNonblock = syscall.O_NONBLOCK

// checkOwner refuses a directory owned by another user, or writable by
// others; private (the default directory) also refuses one that others
// may read or enter.
func checkOwner(dir string, fi os.FileInfo, private bool) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("lro: output directory %s is owned by uid %d, not by this user (uid %d); use a directory of your own",
			dir, st.Uid, os.Getuid())
	}
	perm := fi.Mode().Perm()
	if private && perm&0o077 != 0 {
		return fmt.Errorf("lro: %s is open to other users (mode %v); want 0700", dir, perm)
	}
	if perm&0o022 != 0 {
		return fmt.Errorf("lro: output directory %s is writable by other users (mode %v), who could delete or replace its files; remove their write permission (chmod go-w %s) or use another directory",
			dir, perm, dir)
	}
	return nil
}
