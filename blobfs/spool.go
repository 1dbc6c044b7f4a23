package blobfs

import (
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"
)

// spool is a file being written: its bytes wait in memory until Rename
// uploads them whole, because an object store has no rename, and an
// object written in parts would be visible before it is complete.
//
// The bytes are kept in fixed chunks rather than one growing slice: a
// file costs its own size in memory, not up to twice that plus the copies
// of each growth.
type spool struct {
	name string
	max  int64

	mu      sync.Mutex
	chunks  [][]byte // each chunkSize long but the last
	size    int64
	expires time.Time
	closed  bool
	err     error // the first write error: the file is incomplete
}

// chunkSize matches the engine's write buffer, so most writes fill whole
// chunks.
const chunkSize = 256 << 10

func (s *spool) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, &fs.PathError{Op: "write", Path: s.name, Err: fs.ErrClosed}
	}
	if s.err != nil {
		return 0, s.err
	}
	if s.size+int64(len(p)) > s.max {
		s.err = &fs.PathError{Op: "write", Path: s.name, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, s.max)}
		return 0, s.err
	}
	n := len(p)
	for len(p) > 0 {
		last := len(s.chunks) - 1
		if last < 0 || len(s.chunks[last]) == chunkSize {
			s.chunks = append(s.chunks, make([]byte, 0, chunkSize))
			last++
		}
		c := s.chunks[last]
		k := copy(c[len(c):chunkSize], p)
		s.chunks[last] = c[:len(c)+k]
		p = p[k:]
	}
	s.size += int64(n)
	return n, nil
}

func (s *spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return &fs.PathError{Op: "close", Path: s.name, Err: fs.ErrClosed}
	}
	s.closed = true
	return nil
}

func (s *spool) setExpiry(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expires = t
}

// contents returns a reader of the bytes to upload. A file still open or
// that failed a write is not complete, and is never published.
func (s *spool) contents() (*chunkReader, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.err != nil:
		return nil, s.expires, s.err
	case !s.closed:
		return nil, s.expires, fmt.Errorf("blobfs: %s is still open for writing", s.name)
	}
	return &chunkReader{chunks: s.chunks, size: s.size}, s.expires, nil
}

// discard frees the buffer.
func (s *spool) discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.chunks = nil
}

// chunkReader reads the chunks of a closed spool. It is an io.ReaderAt
// and io.Seeker, so the S3 uploader sends it without copying it into a
// part buffer, and can rewind it to retry.
type chunkReader struct {
	chunks [][]byte
	size   int64
	off    int64
}

func (r *chunkReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("blobfs: negative offset %d", off)
	}
	n := 0
	for len(p) > 0 && off < r.size {
		c := r.chunks[off/chunkSize][off%chunkSize:]
		k := copy(p, c)
		p, off, n = p[k:], off+int64(k), n+k
	}
	if len(p) > 0 {
		return n, io.EOF
	}
	return n, nil
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (r *chunkReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, fmt.Errorf("blobfs: invalid whence %d", whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("blobfs: negative position %d", offset)
	}
	r.off = offset
	return offset, nil
}

// Len is the number of bytes not yet read.
func (r *chunkReader) Len() int { return int(max(r.size-r.off, 0)) }
