package lro

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// FS is the directory that offloaded files live in. Names are plain file
// names, never paths: the engine does not create subdirectories.
//
// Implementations must be safe for concurrent use. [DirFS] is the default;
// [MemFS] keeps files in memory for tests and can inject faults.
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

// File is a file being written by the engine.
type File interface {
	io.Writer
	Close() error
}

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
// is opened on first use and reopened if it disappears, so a directory that
// cannot be created yet makes each offload fall back, not New fail.
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

	mu   sync.Mutex
	root *os.Root
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
	if d.private {
		if err := checkPrivateDir(d.dir); err != nil {
			return nil, err
		}
	}
	root, err := os.OpenRoot(d.dir)
	if err != nil {
		return nil, err
	}
	d.root = root
	return root, nil
}

// forget drops the open root when its directory is gone (a temporary-file
// cleaner removed it), so that the next call creates it again. It reports
// whether it did.
func (d *dirFS) forget(r *os.Root, err error) bool {
	if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if _, statErr := os.Stat(d.dir); statErr == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.root == r {
		d.root = nil
		r.Close()
	}
	return true
}

func (d *dirFS) Create(name string) (File, error) {
	for retried := false; ; retried = true {
		r, err := d.open()
		if err != nil {
			return nil, err
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
	// A hard link publishes atomically and, unlike rename, refuses to
	// replace an existing entry. Filesystems without hard links fall back
	// to rename after checking that the name is free.
	err = r.Link(oldname, newname)
	if err == nil {
		// Published. A temporary name left behind is only clutter, which
		// the janitor removes after the TTL.
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
	return r.Remove(name)
}

func (d *dirFS) Open(name string) (fs.File, error) {
	r, err := d.open()
	if err != nil {
		return nil, err
	}
	before, err := r.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	f, err := r.Open(name)
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

func (d *dirFS) ReadDir() ([]fs.DirEntry, error) {
	r, err := d.open()
	if err != nil {
		return nil, err
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
	d.root = nil
	return err
}

var errNotRegular = errors.New("not a regular file")

// checkPrivateDir refuses a default directory that another user could have
// planted in the shared temporary directory: it must be a real directory
// (not a link), owned by us, and closed to group and others.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("lro: %s is not a directory", dir)
	}
	if !ownedByMe(fi) {
		return fmt.Errorf("lro: %s is owned by another user", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("lro: %s is open to other users (mode %v); want 0700", dir, fi.Mode().Perm())
	}
	return nil
}

// dirFSFor returns the directory FS that cfg names.
func dirFSFor(cfg Config) FS {
	if cfg.OutputDir == "" {
		return &dirFS{dir: DefaultOutputDir(), private: true}
	}
	return DirFS(cfg.OutputDir)
}
