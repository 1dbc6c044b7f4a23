package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// FS is lro.FS, whose documentation states the contract of each method
// and the optional ones (Chtimes, DiskSpace, Remote, Stat,
// WatchAvailability) the engine uses when present. The root package
// checks that the two method sets stay the same.
type FS interface {
	// Create creates the file name for writing, private to its owner
	// (0600). It must fail, with an error wrapping fs.ErrExist, when any
	// entry of that name exists already, a symbolic link included.
	Create(name string) (File, error)
	// Rename publishes oldname as newname atomically: a reader sees either
	// no newname or the complete file. It must not replace an existing
	// newname (fail with an error wrapping fs.ErrExist instead).
	Rename(oldname, newname string) error
	// Remove deletes name. It must not follow a symbolic link.
	Remove(name string) error
	// Open opens the regular file name for reading. It must refuse a
	// symbolic link or anything that is not a regular file.
	Open(name string) (fs.File, error)
	// ReadDir lists the directory. Each entry's Type describes the entry
	// itself, not the target of a link.
	ReadDir() ([]fs.DirEntry, error)
	// Path returns the absolute path of name, the one handed to the model.
	Path(name string) string
}

// The optional methods of an FS (see [FS]).
type (
	chtimesFS interface {
		Chtimes(name string, atime, mtime time.Time) error
	}
	diskSpaceFS interface {
		DiskSpace() (avail, total int64, err error)
	}
	statFS interface {
		Stat(name string) (fs.FileInfo, error)
	}
)

// Stat describes the file name through fsys's Stat method; ok is false
// when fsys has none.
func Stat(fsys FS, name string) (fi fs.FileInfo, ok bool, err error) {
	s, ok := fsys.(statFS)
	if !ok {
		return nil, false, nil
	}
	fi, err = s.Stat(name)
	return fi, true, err
}

// File is a file being written by the engine: what [FS.Create] returns.
// It is io.WriteCloser, so that an FS (lrotest.MemFS among them) need not
// import this package to implement it.
type File = io.WriteCloser

// DefaultOutputDir returns the directory used when Config.OutputDir is
// empty: {system temp dir}/lro-{uid}. The directory is private to the user
// (0700), because the system temporary directory is shared and a result set
// may hold anything a tool returned. Its name is short because the path
// appears in every recipe of every descriptor.
func DefaultOutputDir() string {
	name := "lro"
	if uid := os.Getuid(); uid >= 0 {
		name += "-" + strconv.Itoa(uid)
	}
	return filepath.Join(os.TempDir(), name)
}

// DirFS returns the [FS] of the directory dir, reached only through an
// os.Root: no name can escape it by "..", an absolute path or a symbolic
// link. The directory is created with mode 0700 when it does not exist. It
// must be owned by this user and not writable by others (who could
// otherwise delete, replace or plant files in it); on Unix a directory
// that is not is refused, with an error that says how to fix it. It is
// opened on first use and reopened if it disappears or is replaced, so a
// directory that cannot be used yet makes each offload fall back (with
// that error in the warning), not New fail.
func DirFS(dir string) FS {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	return &dirFS{dir: abs}
}

type dirFS struct {
	dir     string
	private bool // dir is our default directory: insist that it is private

	mu       sync.Mutex
	root     *os.Root
	rootInfo os.FileInfo // of the directory root was opened on
}

func (d *dirFS) open() (*os.Root, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.root != nil {
		return d.root, nil
	}
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(d.dir)
	if err != nil {
		return nil, err
	}
	// Check what was opened, not only the path: it could have been
	// swapped between the two.
	info, err := root.Stat(".")
	if err == nil {
		err = checkDir(d.dir, info, d.private)
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	d.root, d.rootInfo = root, info
	return root, nil
}

// forget drops the open root when err says a name is missing because the
// directory itself is gone (a temporary-file cleaner removed it) or was
// replaced (another process removed and recreated it), so that the next
// call opens the directory now at the path. It reports whether the caller
// should try again.
func (d *dirFS) forget(r *os.Root, err error) bool {
	if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	return d.reopenIfMoved(r)
}

// reopenIfMoved drops r when the path no longer leads to its directory,
// and reports whether it is no longer the current root.
func (d *dirFS) reopenIfMoved(r *os.Root) bool {
	fi, statErr := os.Stat(d.dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.root != r {
		return true // another call has reopened it already
	}
	if statErr == nil && os.SameFile(fi, d.rootInfo) {
		return false
	}
	d.root, d.rootInfo = nil, nil
	r.Close()
	return true
}

func (d *dirFS) Create(name string) (File, error) {
	for retried := false; ; retried = true {
		r, err := d.open()
		if err != nil {
			return nil, err
		}
		// A directory moved away (and perhaps recreated) still takes
		// files through its open handle, where no descriptor's path
		// leads: look at the path first (a stat a file is cheap).
		if !retried && d.reopenIfMoved(r) {
			continue
		}
		f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f, nil
		}
		if retried || !d.forget(r, err) {
			return nil, err
		}
	}
}

func (d *dirFS) Rename(oldname, newname string) error {
	r, err := d.open()
	if err != nil {
		return err
	}
	if d.reopenIfMoved(r) {
		// Moved while the file was written: published there, its path
		// would lead nowhere.
		_ = r.Remove(oldname)
		return &fs.PathError{Op: "rename", Path: d.Path(newname), Err: errDirMoved}
	}
	err = d.rename(r, oldname, newname)
	d.forget(r, err)
	return err
}

func (d *dirFS) rename(r *os.Root, oldname, newname string) error {
	// A hard link publishes atomically and, unlike rename, refuses to
	// replace an existing entry. Filesystems without hard links fall back
	// to rename after checking that the name is free.
	err := r.Link(oldname, newname)
	if err == nil {
		// Published. A temporary name left behind is only a second name
		// of the file (no more bytes), which the janitor removes an hour
		// after the expiry stamped on both.
		_ = r.Remove(oldname)
		return nil
	}
	if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, statErr := r.Lstat(newname); statErr == nil {
		return &fs.PathError{Op: "rename", Path: newname, Err: fs.ErrExist}
	}
	return r.Rename(oldname, newname)
}

func (d *dirFS) Remove(name string) error {
	r, err := d.open()
	if err != nil {
		return err
	}
	err = r.Remove(name)
	d.forget(r, err)
	return err
}

// Chtimes sets the access and modification times of name (see [FS]).
func (d *dirFS) Chtimes(name string, atime, mtime time.Time) error {
	r, err := d.open()
	if err != nil {
		return err
	}
	err = r.Chtimes(name, atime, mtime)
	d.forget(r, err)
	return err
}

// DiskSpace reports the free and total bytes of the directory's file
// system (see [FS]).
func (d *dirFS) DiskSpace() (avail, total int64, err error) {
	return diskSpace(d.dir)
}

func (d *dirFS) Open(name string) (fs.File, error) {
	r, err := d.open()
	if err != nil {
		return nil, err
	}
	before, err := r.Lstat(name)
	if err != nil {
		d.forget(r, err)
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	// Non-blocking: a FIFO swapped in after the Lstat cannot hang open(2).
	f, err := r.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	// Something may have swapped the entry between Lstat and Open.
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	return f, nil
}

// OpenLocal opens name as a [DirFS] opens it (a regular file, not a link,
// without blocking, the entry checked), as an *os.File, when fsys is a
// DirFS; ok is false for any other FS.
func OpenLocal(fsys FS, name string) (f *os.File, ok bool, err error) {
	d, ok := fsys.(*dirFS)
	if !ok {
		return nil, false, nil
	}
	file, err := d.Open(name)
	if err != nil {
		return nil, true, err
	}
	return file.(*os.File), true, nil
}

func (d *dirFS) ReadDir() ([]fs.DirEntry, error) {
	r, err := d.open()
	if err != nil {
		return nil, err
	}
	// A directory removed behind our back still lists, as empty: look at
	// the path first (a stat a scan is cheap).
	if d.reopenIfMoved(r) {
		if r, err = d.open(); err != nil {
			return nil, err
		}
	}
	f, err := r.Open(".")
	if err != nil {
		d.forget(r, err)
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

func (d *dirFS) Path(name string) string { return filepath.Join(d.dir, name) }

// Close releases the directory handle.
func (d *dirFS) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.root == nil {
		return nil
	}
	err := d.root.Close()
	d.root, d.rootInfo = nil, nil
	return err
}

var (
	errNotRegular = errors.New("not a regular file")
	errDirMoved   = errors.New("the output directory was moved away while the file was written")
)

// checkDir refuses an output directory that another user could tamper
// with. It must be a directory, owned by us, and not writable by others
// (who could delete or replace our files, or plant their own); the
// default one, in the shared temporary directory, must moreover be a real
// directory (not a link another user could have planted) closed to group
// and others (0700). info describes the directory as opened.
func checkDir(dir string, info os.FileInfo, private bool) error {
	if !info.IsDir() {
		return fmt.Errorf("lro: output directory %s is not a directory", dir)
	}
	if private {
		fi, err := os.Lstat(dir)
		if err != nil {
			return err
		}
		if !fi.IsDir() || !os.SameFile(fi, info) {
			return fmt.Errorf("lro: %s is not a real directory (a symbolic link?); the default output directory must be one", dir)
		}
	}
	return checkOwner(dir, info, private)
}

// ForDir returns the FS that an output directory names: the object store
// of a store URL (see [RegisterStore]), else the directory; the default
// directory (see [DefaultOutputDir]) when dir is empty.
func ForDir(dir string) FS {
	if _, ok := Scheme(dir); ok {
		return Open(dir)
	}
	if dir == "" {
		return &dirFS{dir: DefaultOutputDir(), private: true}
	}
	return DirFS(dir)
}
