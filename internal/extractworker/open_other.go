//go:build !unix

package extractworker

import (
	"errors"
	"fmt"
	"os"
)

// Open is not supported on this platform: queries run in the server's
// process, which reads files through its FS.
func Open(path string) (*os.File, FileID, error) {
	return nil, FileID{}, &os.PathError{Op: "open", Path: path, Err: errors.ErrUnsupported}
}

// Check accepts a regular file and returns its FileID (with no device or
// inode: this platform does not tell them through os.FileInfo). Links and
// ownership cannot be checked here.
func Check(f *os.File) (FileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileID{}, err
	}
	if !fi.Mode().IsRegular() {
		return FileID{}, fmt.Errorf("%s is not a regular file (%v)", f.Name(), fi.Mode().Type())
	}
	return FileID{Size: fi.Size(), ModNs: fi.ModTime().UnixNano()}, nil
}
