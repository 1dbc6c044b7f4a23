//go:build unix

package extract

import (
	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/store"
)

// openOffload opens the offloaded file name for reading. In a directory it
// never blocks and reads only what this Offloader wrote: the entry must be
// a regular file when looked at (not a link, FIFO or device), it is opened
// with O_NONBLOCK (a FIFO swapped in meanwhile cannot block open(2)), and
// the file opened must be that same entry, a regular file with a single
// link (a hard link to a file outside the directory is refused), owned by
// this user.
func (o *Tool) openOffload(name string) (*offloadFile, error) {
	f, ok, err := store.OpenLocal(o.env.FS, name) // a regular file, not a link, non-blocking, the entry checked
	if !ok {
		return o.openThroughFS(name)
	}
	if err != nil {
		return nil, err
	}
	id, err := extractworker.Check(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &offloadFile{name: name, f: f, size: id.Size, key: name + "\x00" + id.Key(), id: id, direct: true}, nil
}
