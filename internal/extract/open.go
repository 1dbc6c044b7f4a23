package extract

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/store"
)

// offloadFile is an offloaded file opened for one lro_extract call.
type offloadFile struct {
	name string // in the FS
	f    fs.File
	size int64
	// key identifies the file's content in this process's caches; it
	// starts with name and a NUL, so that a file's entries can be dropped
	// by name.
	key string
	// id identifies the file for a worker, which opens it by its path and
	// accepts it only if it is still this file.
	id extractworker.FileID
	// direct is set for a file of a directory that passed every check of
	// extractworker.Check: a worker process may read it.
	direct bool
	// local is the path of the local copy of a file of a store (see
	// isolate), and release gives it back; empty for others.
	local   string
	release func()
}

func (f *offloadFile) Close() error {
	err := f.f.Close()
	if f.release != nil {
		f.release()
		f.release = nil
	}
	return err
}

// workerPath returns the path a worker process opens f by.
func (f *offloadFile) workerPath(fsys store.FS) string {
	if f.local != "" {
		return f.local
	}
	return fsys.Path(f.name)
}

// openThroughFS opens name through the Offloader's FS, for an FS that is not
// a directory of this system (MemFS, or one of the user's): such a file is
// only read in this process.
func (o *Tool) openThroughFS(name string) (*offloadFile, error) {
	f, err := o.env.FS.Open(name)
	if err != nil {
		if store.IsRemote(o.env.FS) && !errors.Is(err, fs.ErrNotExist) {
			err = &store.Error{Err: err}
		}
		return nil, err
	}
	if store.IsRemote(o.env.FS) {
		f = storeFile{f}
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", name)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	key := name + "\x00" + strconv.FormatInt(fi.Size(), 16) + ":" + strconv.FormatInt(fi.ModTime().UnixNano(), 16)
	return &offloadFile{name: name, f: f, size: fi.Size(), key: key}, nil
}

// storeFile is a file of a store being read: a failure of its reads is a
// storeError, which tells the model no more than it should know.
type storeFile struct{ fs.File }

func (f storeFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	if err != nil && err != io.EOF {
		err = &store.Error{Err: err}
	}
	return n, err
}
