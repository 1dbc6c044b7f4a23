//go:build unix

package extractworker

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Open opens the file at path for reading, as lro_extract must: without
// following a symbolic link in its last element, and without blocking
// (a FIFO swapped in for the file would block open(2) until a writer
// comes, forever), and returns it with its FileID once Check has accepted
// it.
func Open(path string) (*os.File, FileID, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			err = errors.New("a symbolic link, not a regular file")
		}
		return nil, FileID{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	id, err := Check(f)
	if err != nil {
		f.Close()
		return nil, FileID{}, err
	}
	return f, id, nil
}

// Check accepts an open file only when it is a regular file, with a single
// link (a hard link planted in the directory would otherwise let a query
// read a file from anywhere on the same file system), owned by this
// process's user. It returns the file's FileID.
func Check(f *os.File) (FileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileID{}, err
	}
	if !fi.Mode().IsRegular() {
		return FileID{}, fmt.Errorf("%s is not a regular file (%v)", f.Name(), fi.Mode().Type())
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, fmt.Errorf("%s: no file status", f.Name())
	}
	if st.Nlink != 1 {
		return FileID{}, fmt.Errorf("%s has %d links; an offloaded file has one", f.Name(), st.Nlink)
	}
	if int(st.Uid) != os.Getuid() {
		return FileID{}, fmt.Errorf("%s is owned by another user", f.Name())
	}
	return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: fi.Size(), ModNs: fi.ModTime().UnixNano()}, nil
}
