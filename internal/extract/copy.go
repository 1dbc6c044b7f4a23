package extract

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/scratch"
)

// localCopies keeps private local copies of offloaded files of an FS that
// is not a directory of this system (an object store, an lrotest.MemFS), so that
// their queries run in worker processes with the same limits as those of
// a directory's files, rather than in the server. A copy is made on a
// file's first query and kept, by the file's name, size and modification
// time, for the next ones; the copies take at most a bound of disk (the
// least recently used are deleted first, never one a query still reads),
// in a directory of their own (mode 0700, under os.TempDir) that Close
// removes, and that the next process to make copies removes if this one
// was killed (see internal/scratch). The zero value is ready for use.
type localCopies struct {
	mu      sync.Mutex
	dir     string // made on first use
	used    int64  // bytes of the ready copies
	entries map[string]*localCopy
	lru     list.List // of *localCopy, least recently used first
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
		c.entries = map[string]*localCopy{}
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
	return e.path, func() { c.release(e) }, nil
}

// dirLocked returns the directory of the copies, made on first use; c.mu
// is held.
func (c *localCopies) dirLocked() (string, error) {
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
		delete(c.entries, e.key)
		os.Remove(e.path)
		os.Remove(c.dir)
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
			delete(c.entries, e.key)
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
	for key, e := range c.entries {
		if e.refs == 0 && e.elem != nil {
			os.Remove(e.path)
			c.lru.Remove(e.elem)
			e.elem = nil
			c.used -= e.size
			delete(c.entries, key)
		}
	}
	if c.dir != "" {
		os.Remove(c.dir) // fails while a copy is still read
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
func (o *Tool) isolate(ctx context.Context, f *offloadFile, lim Limits) (*offloadFile, error) {
	if f.direct || lim.InProcess || !extractworker.Supported() {
		return f, nil
	}
	path, release, err := o.copies.get(ctx, f.key, lim.MaxFileBytes, max(lim.MaxFileBytes, maxCopiesBytes), func() (io.ReadCloser, error) {
		return io.NopCloser(f.f), nil // not read yet: from its first byte
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", echo(o.env.FS.Path(f.name)), err)
	}
	lf, id, err := extractworker.Open(path)
	if err != nil {
		release()
		return nil, fmt.Errorf("cannot read the local copy of %s: %v", echo(o.env.FS.Path(f.name)), err)
	}
	f.Close()
	return &offloadFile{name: f.name, f: lf, size: id.Size, key: f.name + "\x00" + id.Key(), id: id, direct: true, local: path, release: release}, nil
}
