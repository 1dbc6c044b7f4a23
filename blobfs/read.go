package blobfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"gocloud.dev/blob"
)

// Open opens the object name for reading, streaming it from the store.
// A file still being written (a buffer) is not there to open: only
// published files can be read.
func (f *FS) Open(name string) (fs.File, error) {
	key, err := f.key("open", name)
	if err == nil {
		err = f.check("open", name)
	}
	if err != nil {
		return nil, err
	}
	// The read is bounded as a whole, not only its first byte: the
	// context lives until Close, and is cancelled when the time of the
	// object's size at the minimum throughput has passed.
	ctx, cancel := context.WithCancelCause(context.Background())
	timer := time.AfterFunc(f.opts.timeout, func() { cancel(os.ErrDeadlineExceeded) })
	r, err := f.bucket.NewReader(ctx, key, nil)
	if err != nil {
		timer.Stop()
		cancel(nil)
		return nil, &fs.PathError{Op: "open", Path: name, Err: mapErr(f.observe(deadline(ctx, err)))}
	}
	timer.Reset(f.opts.bound(r.Size()))
	return &object{fs: f, r: r, ctx: ctx, cancel: cancel, timer: timer, info: info{name: name, size: r.Size(), modTime: r.ModTime()}}, nil
}

// Stat describes the object name in one metadata request, without
// reading it: its size and, as its modification time, the expiry recorded
// in it (or when it was uploaded). lro_extract calls it to find its local
// copy of an object it has read before, so that a warm query does not
// read the object again (see the package documentation).
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	key, err := f.key("stat", name)
	if err == nil {
		err = f.check("stat", name)
	}
	if err != nil {
		return nil, err
	}
	ctx, cancel := f.ctx()
	defer cancel()
	attrs, err := f.bucket.Attributes(ctx, key)
	if err = f.observe(err); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: mapErr(err)}
	}
	return info{name: name, size: attrs.Size, modTime: f.noteExpiry(name, attrs)}, nil
}

// deadline returns err, or, when ctx was cancelled for its deadline,
// os.ErrDeadlineExceeded wrapping err.
func deadline(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: %w", os.ErrDeadlineExceeded, err)
	}
	return err
}

// object is an object open for reading.
type object struct {
	fs     *FS
	r      *blob.Reader
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	info   info
}

func (o *object) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	if err != nil && err != io.EOF {
		err = &fs.PathError{Op: "read", Path: o.info.name, Err: mapErr(o.fs.observe(deadline(o.ctx, err)))}
	}
	return n, err
}

func (o *object) Stat() (fs.FileInfo, error) { return o.info, nil }
func (o *object) Close() error {
	err := o.r.Close()
	o.timer.Stop()
	o.cancel(nil)
	return err
}

// info describes an object as a regular file private to its owner. Its
// modification time is the expiry recorded in it when known (as on a
// directory, see lro.FS Chtimes), else when it was uploaded.
type info struct {
	name    string
	size    int64
	modTime time.Time
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return i.size }
func (i info) Mode() fs.FileMode  { return 0o600 }
func (i info) ModTime() time.Time { return i.modTime }
func (i info) IsDir() bool        { return false }
func (i info) Sys() any           { return nil }
