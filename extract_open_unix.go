//go:build unix

package lro

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/mcplro/lro/internal/extractworker"
)

// openOffload opens the offloaded file name for reading. In a directory it
// never blocks and reads only what this Offloader wrote: the entry must be
// a regular file when looked at (not a link, FIFO or device), it is opened
// with O_NONBLOCK (a FIFO swapped in meanwhile cannot block open(2)), and
// the file opened must be that same entry, a regular file with a single
// link (a hard link to a file outside the directory is refused), owned by
// this user.
func (o *Offloader) openOffload(name string) (*offloadFile, error) {
	d, ok := o.opts.fs.(*dirFS)
	if !ok {
		return o.openThroughFS(name)
	}
	root, err := d.open()
	if err != nil {
		return nil, err
	}
	before, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	id, err := extractworker.Check(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	if after, err := f.Stat(); err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	return &offloadFile{name: name, f: f, size: id.Size, key: name + "\x00" + id.Key(), id: id, direct: true}, nil
}
