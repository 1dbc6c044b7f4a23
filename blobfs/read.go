package blobfs

import (
	"context"
	"io/fs"
	"time"

	"gocloud.dev/blob"
)

// Open opens the object name for reading, streaming it from the store.
// A file still being written (a buffer) is not there to open: only
// published files can be read.
func (f *FS) Open(name string) (fs.File, error) {
	key, err := f.key("open", name)
	if err != nil {
		return nil, err
	}
	// The read is bounded as a whole, not only its first byte: the
	// context lives until Close.
	ctx, cancel := context.WithTimeout(context.Background(), f.opts.timeout)
	r, err := f.bucket.NewReader(ctx, key, nil)
	if err != nil {
		cancel()
		return nil, &fs.PathError{Op: "open", Path: name, Err: mapErr(err)}
	}
	return &object{r: r, cancel: cancel, info: info{name: name, size: r.Size(), modTime: r.ModTime()}}, nil
}

// object is an object open for reading.
type object struct {
	r      *blob.Reader
	cancel context.CancelFunc
	info   info
}

func (o *object) Read(p []byte) (int, error) { return o.r.Read(p) }
func (o *object) Stat() (fs.FileInfo, error) { return o.info, nil }
func (o *object) Close() error {
	err := o.r.Close()
	o.cancel()
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
