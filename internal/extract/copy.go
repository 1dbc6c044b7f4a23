package extract

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/scratch"
)

// localCopies keeps private local copies of offloaded files of an FS that
// is not a directory of this system (an object store, an lrotest.MemFS), so that
// their queries run in worker processes with the same limits as those of
// a directory's files, rather than in the server. A copy is made on a
// file's first query and kept, by the file's name, size and modification
// time, for the next ones (and, within copyFreshFor of the last look at
// the file, by its name alone); the copies take at most a bound of disk (the
// least recently used are deleted first, never one a query still reads),
// in a directory of their own (mode 0700, under os.TempDir) that Close
// removes, and that the next process to make copies removes if this one
// was killed (see internal/scratch). The zero value is ready for use.
type localCopies struct {
	mu      sync.Mutex
	dir     string // made on first use
	used    int64  // bytes of the ready copies
	entries map[string]*localCopy
	byName  map[string]*localCopy // the copy of each file name last looked at
	lru     list.List             // of *localCopy, least recently used first
	closed  bool
}

type localCopy struct {
	key   string
	path  string
	size  int64
	ready chan struct{} // closed once written, or failed (err)
	err   error
	refs  int           // queries holding the copy
	elem  *list.Element // in lru, once ready
	// checked is when the file was last found, of this size and
	// modification time, in its FS.
	checked time.Time
}

// errCopiesClosed: the Offloader was closed during the call.
var errCopiesClosed = errors.New("the server is shutting down")

// get returns the path of the local copy of the file whose content key is
// key, making it from open when there is none, and a function to call
// once the copy is no longer read. A copy larger than maxBytes is
// refused; the copies together take at most maxTotal bytes, beyond the
// ones in use.
func (c *localCopies) get(ctx context.Context, key string, maxBytes, maxTotal int64, open func() (io.ReadCloser, error)) (string, func(), error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return "", nil, errCopiesClosed
	}
	if c.entries == nil {
		c.entries, c.byName = map[string]*localCopy{}, map[string]*localCopy{}
	}
	if e, ok := c.entries[key]; ok {
		e.refs++
		c.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			c.release(e)
			return "", nil, context.Cause(ctx)
		}
		if e.err != nil {
			c.release(e)
			return "", nil, e.err
		}
		c.checked(e)
		return e.path, func() { c.release(e) }, nil
	}
	e := &localCopy{key: key, ready: make(chan struct{}), refs: 1}
	c.entries[key] = e
	dir, err := c.dirLocked()
	c.mu.Unlock()
	if err == nil {
		e.path, e.size, err = writeCopy(dir, open, maxBytes)
	}
	c.mu.Lock()
	if err == nil && c.closed {
		os.Remove(e.path)
		err = errCopiesClosed
	}
	if err != nil {
		e.err = err
		delete(c.entries, key)
		close(e.ready)
		c.mu.Unlock()
		c.release(e)
		return "", nil, err
	}
	e.elem = c.lru.PushBack(e)
	c.used += e.size
	c.evictLocked(maxTotal)
	close(e.ready)
	c.mu.Unlock()
	c.checked(e)
	return e.path, func() { c.release(e) }, nil
}

// checked records that e's file was just found in its FS as e was made
// of: its name now finds e, without a look at the FS, for copyFreshFor.
func (c *localCopies) checked(e *localCopy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.elem == nil {
		return // evicted meanwhile
	}
	e.checked = time.Now()
	c.byName[fileOfKey(e.key)] = e
}

// fresh returns the copy of the file name, held (give it back with
// release), when the file was found in its FS less than within ago and
// has not expired; nil otherwise. A file's modification time is the
// expiry its writer recorded (see store.FS's Chtimes): past it, another
// replica's janitor may have removed the file, so the FS is asked again
// rather than a copy answering for a file whose TTL has passed.
func (c *localCopies) fresh(name string, within time.Duration) *localCopy {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byName[name]
	if !ok || c.closed || e.elem == nil || time.Since(e.checked) >= within || !time.Now().Before(expiryOfKey(e.key)) {
		return nil
	}
	e.refs++
	return e
}

// ready returns the copy of the file whose content key is key, just found
// in its FS, held (give it back with release), when one is made; nil
// otherwise.
func (c *localCopies) ready(key string) *localCopy {
	c.mu.Lock()
	e, ok := c.entries[key]
	if !ok || c.closed || e.elem == nil {
		c.mu.Unlock()
		return nil
	}
	e.refs++
	c.mu.Unlock()
	c.checked(e)
	return e
}

// forgetLocked drops e, whose file is deleted or about to be; c.mu is
// held.
func (c *localCopies) forgetLocked(e *localCopy) {
	delete(c.entries, e.key)
	if name := fileOfKey(e.key); c.byName[name] == e {
		delete(c.byName, name)
	}
}

// fileOfKey returns the file name of a content key (see offloadFile.key).
func fileOfKey(key string) string {
	name, _, _ := strings.Cut(key, "\x00")
	return name
}

// expiryOfKey returns the modification time in the content key key (see
// contentKey): the expiry its file records.
func expiryOfKey(key string) time.Time {
	_, meta, _ := strings.Cut(key, "\x00")
	_, mod, _ := strings.Cut(meta, ":")
	n, err := strconv.ParseInt(mod, 16, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// lost forgets the copy of key, whose file is gone from under it (see
// isolate): the next get makes it again. Holds on it are given back as
// usual.
func (c *localCopies) lost(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.elem == nil {
		return
	}
	c.lru.Remove(e.elem)
	e.elem = nil
	c.used -= e.size
	c.forgetLocked(e)
}

// dirLocked returns the directory of the copies, made on first use, and
// again when it was removed from under this process; c.mu is held.
func (c *localCopies) dirLocked() (string, error) {
	if c.dir != "" {
		if _, err := os.Lstat(c.dir); errors.Is(err, fs.ErrNotExist) {
			scratch.Release(c.dir)
			c.dir = ""
		}
	}
	if c.dir == "" {
		dir, err := scratch.Dir("lro-extract-copies-")
		if err != nil {
			return "", fmt.Errorf("cannot make a directory for local copies: %v", err)
		}
		c.dir = dir
	}
	return c.dir, nil
}

// writeCopy copies the file open returns into a new file of dir, of at
// most maxBytes.
func writeCopy(dir string, open func() (io.ReadCloser, error), maxBytes int64) (string, int64, error) {
	src, err := open()
	if err != nil {
		return "", 0, err
	}
	defer src.Close()
	dst, err := os.CreateTemp(dir, "copy-*.jsonl")
	if err != nil {
		return "", 0, fmt.Errorf("cannot make a local copy: %v", err)
	}
	n, err := io.Copy(dst, io.LimitReader(src, maxBytes+1))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		err = fmt.Errorf("making a local copy: %w", err)
	case n > maxBytes:
		err = fmt.Errorf("the file is larger than the %d bytes this tool reads", maxBytes)
	}
	if err != nil {
		os.Remove(dst.Name())
		return "", 0, err
	}
	return dst.Name(), n, nil
}

// release gives back a hold on e. After close, the last hold on a copy
// deletes it, and the directory once it is empty.
func (c *localCopies) release(e *localCopy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.refs > 0 || e.elem == nil {
		return
	}
	if c.closed {
		c.lru.Remove(e.elem)
		e.elem = nil
		c.used -= e.size
		c.forgetLocked(e)
		os.Remove(e.path)
		c.removeDirLocked()
		return
	}
	c.lru.MoveToBack(e.elem)
}

// evictLocked deletes the least recently used copies that no query holds
// until the copies take at most maxTotal bytes; c.mu is held.
func (c *localCopies) evictLocked(maxTotal int64) {
	for el := c.lru.Front(); el != nil && c.used > maxTotal; {
		next := el.Next()
		if e := el.Value.(*localCopy); e.refs == 0 {
			c.lru.Remove(el)
			e.elem = nil
			c.forgetLocked(e)
			c.used -= e.size
			os.Remove(e.path)
		}
		el = next
	}
}

// close deletes the copies no query holds (the others on their release)
// and their directory, and refuses new copies.
func (c *localCopies) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, e := range c.entries {
		if e.refs == 0 && e.elem != nil {
			os.Remove(e.path)
			c.lru.Remove(e.elem)
			e.elem = nil
			c.used -= e.size
			c.forgetLocked(e)
		}
	}
	c.removeDirLocked() // fails while a copy is still read
}

// removeDirLocked removes the directory of the copies once it is empty,
// and gives up its lock (see scratch.Dir); c.mu is held.
func (c *localCopies) removeDirLocked() {
	if c.dir == "" {
		return
	}
	if err := os.Remove(c.dir); err == nil || errors.Is(err, fs.ErrNotExist) {
		scratch.Release(c.dir)
	}
}

// count returns how many copies are kept, for tests.
func (c *localCopies) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// maxCopiesBytes bounds the disk the local copies of an Offloader take,
// beyond those in use, unless one file needs more (MaxFileBytes).
const maxCopiesBytes = 512 << 20

// isolate returns f, ready for a worker process to read. A file of an FS
// that is not a directory of this system (an object store, a MemFS) is
// replaced by its local copy, made on its first query and kept for the
// next ones; f is then closed. Queries chosen to run in this process, and
// systems without workers, keep f.
//
// A copy can be lost while it is kept: another process's sweep, a cleaner
// of TMPDIR, an operator. A lost copy is forgotten and made again, once;
// should that fail too, the call fails saying so. On error f is left
// open, the caller's to close.
func (o *Tool) isolate(ctx context.Context, f *offloadFile, lim Limits) (*offloadFile, error) {
	if f.direct || lim.InProcess || !extractworker.Supported() {
		return f, nil
	}
	read := false
	open := func() (io.ReadCloser, error) {
		if !read {
			read = true
			return io.NopCloser(f.f), nil // not read yet: from its first byte
		}
		return o.env.FS.Open(f.name) // f was copied, and the copy lost
	}
	for attempt := 0; ; attempt++ {
		path, release, err := o.copies.get(ctx, f.key, lim.MaxFileBytes, max(lim.MaxFileBytes, maxCopiesBytes), open)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", echo(o.env.FS.Path(f.name)), err)
		}
		lf, err := o.openCopy(f.name, path, release)
		if errors.Is(err, fs.ErrNotExist) && attempt == 0 {
			o.copies.lost(f.key)
			continue
		}
		if err != nil {
			return nil, err
		}
		f.Close()
		return lf, nil
	}
}

// openCopy opens path, the local copy of the file name, which release
// gives back (also when the copy cannot be opened).
func (o *Tool) openCopy(name, path string, release func()) (*offloadFile, error) {
	lf, id, err := extractworker.Open(path)
	if err != nil {
		release()
		return nil, fmt.Errorf("cannot read the local copy of %s: %w", echo(o.env.FS.Path(name)), err)
	}
	return &offloadFile{name: name, f: lf, size: id.Size, key: name + "\x00" + id.Key(), id: id, direct: true, local: path, release: release}, nil
}

// copyFreshFor is how long after lro_extract found a file of a store in
// it the file's local copy is used without asking the store again. It is
// safe because a published file never changes: the engine publishes it
// with a rename that may only create (on a store, one create-only upload),
// never writes to it again, and never reuses its name (it holds a ULID).
// So a copy holds the object's bytes for as long as the object exists;
// all the window can miss is a deletion in its last seconds (the file's
// expiry, an eviction), and the answer is then the one the call would
// have had moments earlier. Past it, one metadata request checks the
// file is still there, of the same size and time.
var copyFreshFor = 10 * time.Second

// useCopy opens e, a copy of the file name held for this call; nil when
// e is nil or cannot be opened (the file is then read from its FS).
func (o *Tool) useCopy(name string, e *localCopy) *offloadFile {
	if e == nil {
		return nil
	}
	f, err := o.openCopy(name, e.path, func() { o.copies.release(e) })
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			o.copies.lost(e.key)
		}
		return nil
	}
	return f
}
