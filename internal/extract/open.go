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
// only read in this process. A file of a store that lro_extract copied
// within copyFreshFor is its local copy, and costs no request; otherwise
// an FS that can Stat is asked for the file's size and modification time
// alone (one metadata request), and the file is opened (the object read)
// only when it is read; a file of that size and time lro_extract holds a
// copy of is its copy (see isolate).
func (o *Tool) openThroughFS(name string) (*offloadFile, error) {
	remote := store.IsRemote(o.env.FS)
	if remote {
		if f := o.useCopy(name, o.copies.fresh(name, copyFreshFor)); f != nil {
			return f, nil
		}
	}
	var f fs.File
	fi, ok, err := store.Stat(o.env.FS, name)
	if ok && err == nil {
		if lf := o.useCopy(name, o.copies.ready(contentKey(name, fi))); lf != nil {
			return lf, nil
		}
		f = &lazyFile{fsys: o.env.FS, name: name, info: fi}
	} else if !ok {
		if f, err = o.env.FS.Open(name); err == nil {
			fi, err = f.Stat()
		}
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		if remote && !errors.Is(err, fs.ErrNotExist) {
			err = &store.Error{Err: err}
		}
		return nil, err
	}
	if remote {
		f = storeFile{f}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	return &offloadFile{name: name, f: f, size: fi.Size(), key: contentKey(name, fi)}, nil
}

// contentKey returns the key of the content of the file name, described
// by fi, in this process's caches: the name, a NUL, the size and the
// modification time.
func contentKey(name string, fi fs.FileInfo) string {
	return name + "\x00" + strconv.FormatInt(fi.Size(), 16) + ":" + strconv.FormatInt(fi.ModTime().UnixNano(), 16)
}

// lazyFile is a file described by the FS's Stat, opened on its first
// read: a file whose local copy is used is never opened.
type lazyFile struct {
	fsys store.FS
	name string
	info fs.FileInfo
	f    fs.File // once opened
	err  error   // of the opening
}

func (l *lazyFile) Read(p []byte) (int, error) {
	if l.f == nil && l.err == nil {
		l.f, l.err = l.fsys.Open(l.name)
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.f.Read(p)
}

func (l *lazyFile) Stat() (fs.FileInfo, error) { return l.info, nil }

func (l *lazyFile) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
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
