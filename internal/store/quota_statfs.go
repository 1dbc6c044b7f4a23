//go:build linux || darwin || freebsd

package store

import "syscall"

// diskSpace reports the bytes free to an unprivileged user, and the size,
// of the file system holding path.
func diskSpace(path string) (avail, total int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	// The field types differ between systems.
	bsize := int64(st.Bsize)
	return int64(st.Bavail) * bsize, int64(st.Blocks) * bsize, nil
}
