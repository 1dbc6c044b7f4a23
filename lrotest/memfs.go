package lrotest

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemFS is an in-memory [github.com/mcplro/lro.FS] for tests: offloading
// needs no disk, and faults can be injected to exercise the fallback
// path. The zero value is not usable; call [NewMemFS]. Its methods are
// safe for concurrent use.
type MemFS struct {
	mu        sync.Mutex
	dir       string
	files     map[string]*memFile
	writes    int   // Write calls so far, across all files
	failWrite int   // fail the failWrite-th write (1-based); 0 = never
	writeErr  error // error for that write
	createErr error
	renameErr error
	avail     int64 // DiskSpace, when spaceSet
	total     int64
	spaceSet  bool
}

type memFile struct {
	data    []byte
	modTime time.Time
	symlink bool
}

// NewMemFS returns an empty in-memory FS whose files appear to live in dir
// (the paths handed to the model are dir/name). The methods a test calls
// itself ([MemFS.ReadFile], [MemFS.WriteFile], [MemFS.Symlink]) take a
// file's name or that path, the file_path of a descriptor.
func NewMemFS(dir string) *MemFS {
	return &MemFS{dir: dir, files: make(map[string]*memFile)}
}

// base returns the name of the file at p, which is a name or dir/name.
func (m *MemFS) base(p string) string {
	if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(m.dir, "/")+"/"); ok && !strings.Contains(rest, "/") {
		return rest
	}
	return p
}

// FailWrite makes the nth Write call from now on (1 for the next) fail with
// err, for example syscall.ENOSPC to simulate a full disk mid-file.
func (m *MemFS) FailWrite(n int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failWrite, m.writeErr, m.writes = n, err, 0
}

// FailCreate makes every Create fail with err (nil clears the fault), for
// example syscall.EACCES to simulate a read-only directory.
func (m *MemFS) FailCreate(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.createErr = err
}

// FailRename makes every Rename fail with err (nil clears the fault).
func (m *MemFS) FailRename(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.renameErr = err
}

// Symlink plants a symbolic link named name, as an attacker might; the
// engine must neither write through it nor delete it.
func (m *MemFS) Symlink(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[m.base(name)] = &memFile{symlink: true}
}

// WriteFile stores a complete file directly, as another process would.
func (m *MemFS) WriteFile(name string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[m.base(name)] = &memFile{data: bytes.Clone(data), modTime: time.Now()}
}

// ReadFile returns a copy of the contents of name, a file's name or the
// path a descriptor gives (dir/name).
func (m *MemFS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[m.base(name)]
	if !ok || f.symlink {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return bytes.Clone(f.data), nil
}

// Names returns the names of all entries, sorted.
func (m *MemFS) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.files))
	for name := range m.files {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Create implements [github.com/mcplro/lro.FS].
func (m *MemFS) Create(name string) (io.WriteCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.createErr != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: m.createErr}
	}
	if _, ok := m.files[name]; ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	}
	f := &memFile{modTime: time.Now()}
	m.files[name] = f
	return &memWriter{fs: m, name: name, f: f}, nil
}

// Rename implements [github.com/mcplro/lro.FS].
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.renameErr != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: m.renameErr}
	}
	f, ok := m.files[oldname]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	if _, ok := m.files[newname]; ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrExist}
	}
	delete(m.files, oldname)
	m.files[newname] = f
	return nil
}

// Remove implements [github.com/mcplro/lro.FS].
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[name]; !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(m.files, name)
	return nil
}

// Open implements [github.com/mcplro/lro.FS].
func (m *MemFS) Open(name string) (fs.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if f.symlink {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	return &memReader{Reader: bytes.NewReader(bytes.Clone(f.data)), info: f.info(name)}, nil
}

// ReadDir implements [github.com/mcplro/lro.FS].
func (m *MemFS) ReadDir() ([]fs.DirEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]fs.DirEntry, 0, len(m.files))
	for name, f := range m.files {
		out = append(out, fs.FileInfoToDirEntry(f.info(name)))
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// Path implements [github.com/mcplro/lro.FS].
func (m *MemFS) Path(name string) string { return path.Join(m.dir, name) }

// Chtimes sets the modification time of name (see
// [github.com/mcplro/lro.FS]); MemFS keeps no access time.
func (m *MemFS) Chtimes(name string, _, mtime time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[name]
	if !ok || f.symlink {
		return &fs.PathError{Op: "chtimes", Path: name, Err: fs.ErrNotExist}
	}
	f.modTime = mtime
	return nil
}

// SetDiskSpace makes DiskSpace report avail bytes free of total, to test
// the free-space reserve (see [github.com/mcplro/lro.WithMinFreeBytes]).
// Until it is called, DiskSpace reports that it cannot tell, and there is
// no reserve.
func (m *MemFS) SetDiskSpace(avail, total int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.avail, m.total, m.spaceSet = avail, total, true
}

// DiskSpace reports what SetDiskSpace set (see [github.com/mcplro/lro.FS]).
func (m *MemFS) DiskSpace() (avail, total int64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.spaceSet {
		return 0, 0, errors.ErrUnsupported
	}
	return m.avail, m.total, nil
}

type memWriter struct {
	fs     *MemFS
	name   string
	f      *memFile
	closed bool
}

func (w *memWriter) Write(p []byte) (int, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if w.closed {
		return 0, fs.ErrClosed
	}
	w.fs.writes++
	if w.fs.failWrite > 0 && w.fs.writes == w.fs.failWrite {
		// A full disk typically accepts part of the buffer first.
		half := len(p) / 2
		w.f.data = append(w.f.data, p[:half]...)
		return half, &fs.PathError{Op: "write", Path: w.name, Err: w.fs.writeErr}
	}
	w.f.data = append(w.f.data, p...)
	return len(p), nil
}

func (w *memWriter) Close() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if w.closed {
		return fs.ErrClosed
	}
	w.closed = true
	return nil
}

type memReader struct {
	*bytes.Reader
	info memInfo
}

func (r *memReader) Stat() (fs.FileInfo, error) { return r.info, nil }
func (r *memReader) Close() error               { return nil }

// memInfo is a snapshot of a file, taken under the MemFS lock: the file
// may change after.
type memInfo struct {
	name    string
	size    int64
	modTime time.Time
	symlink bool
}

// info returns a snapshot of f. The caller holds the MemFS lock.
func (f *memFile) info(name string) memInfo {
	return memInfo{name: name, size: int64(len(f.data)), modTime: f.modTime, symlink: f.symlink}
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return i.modTime }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() fs.FileMode {
	if i.symlink {
		return fs.ModeSymlink | 0o777
	}
	return 0o600
}

// errNotRegular is Open's error for a symbolic link, as lro's directory
// says it.
var errNotRegular = errors.New("not a regular file")
