package blobfs

import (
	"io"
	"io/fs"
	"time"

	"gocloud.dev/blob"
)

// ReadDir lists the objects directly under the prefix (not those of its
// subfolders), sorted by name. An entry's Info reads the expiry recorded
// in the object (one metadata request the first time, remembered while
// the object is listed): the janitor needs it, and a listing does not
// carry metadata.
func (f *FS) ReadDir() ([]fs.DirEntry, error) {
	if err := f.check("readdir", f.location); err != nil {
		return nil, err
	}
	it := f.bucket.List(&blob.ListOptions{Prefix: f.prefix, Delimiter: "/"})
	var out []fs.DirEntry
	seen := make(map[string]struct{})
	for {
		// Each page is one request, bounded on its own: a prefix of many
		// objects takes many pages, and the janitor, not a tool call,
		// waits for them.
		ctx, cancel := f.ctx()
		obj, err := it.Next(ctx)
		cancel()
		if err == io.EOF { // the iterator's own end; a connection's EOF, wrapped, is a failure
			break
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: f.location, Err: mapErr(f.observe(err))}
		}
		if obj.IsDir {
			continue
		}
		name := obj.Key[len(f.prefix):]
		if _, err := f.key("readdir", name); err != nil {
			continue // not a plain name: never one of the engine's
		}
		seen[name] = struct{}{}
		out = append(out, &entry{fs: f, name: name, size: obj.Size})
	}
	// Forget the expiries of objects gone, so that the memory of them
	// stays bounded by what the prefix holds.
	f.mu.Lock()
	for name := range f.expires {
		if _, ok := seen[name]; !ok {
			delete(f.expires, name)
		}
	}
	f.mu.Unlock()
	return out, nil
}

// entry is a listed object.
type entry struct {
	fs   *FS
	name string
	size int64
}

func (e *entry) Name() string      { return e.name }
func (e *entry) IsDir() bool       { return false }
func (e *entry) Type() fs.FileMode { return 0 }

// Info returns the object's size and, as its modification time, the
// expiry recorded in it, or when it was uploaded if it records none. An
// object deleted since the listing is fs.ErrNotExist; an error reading
// the metadata is returned, so that the janitor leaves the object for its
// next scan rather than judge it by its upload time.
func (e *entry) Info() (fs.FileInfo, error) {
	mod, err := e.fs.expiry(e.name)
	if err != nil {
		return nil, err
	}
	return info{name: e.name, size: e.size, modTime: mod}, nil
}

func (e *entry) String() string { return fs.FormatDirEntry(e) }

// expiry returns the expiry recorded in the object name, or when it was
// uploaded if it records none.
func (f *FS) expiry(name string) (time.Time, error) {
	f.mu.Lock()
	t, ok := f.expires[name]
	f.mu.Unlock()
	if ok {
		return t, nil
	}
	if err := f.check("stat", name); err != nil {
		return time.Time{}, err
	}
	ctx, cancel := f.ctx()
	defer cancel()
	attrs, err := f.bucket.Attributes(ctx, f.prefix+name)
	if err = f.observe(err); err != nil {
		return time.Time{}, &fs.PathError{Op: "stat", Path: name, Err: mapErr(err)}
	}
	return f.noteExpiry(name, attrs), nil
}

// noteExpiry returns the expiry recorded in the attributes of the object
// name, or when it was uploaded if they record none, and remembers it.
func (f *FS) noteExpiry(name string, attrs *blob.Attributes) time.Time {
	t := attrs.ModTime
	if v, ok := attrs.Metadata[metaExpires]; ok {
		if parsed, perr := time.Parse(time.RFC3339Nano, v); perr == nil {
			t = parsed
		}
	}
	f.mu.Lock()
	f.expires[name] = t
	f.mu.Unlock()
	return t
}
