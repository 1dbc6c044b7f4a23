package blobfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcplro/lro"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// FS is an [lro.FS] whose files are the objects of a bucket under a
// prefix. It is safe for concurrent use; make it with [New] or [Open].
type FS struct {
	bucket   *blob.Bucket
	ownsB    bool // the bucket was opened by Open, and is closed by Close
	prefix   string
	location string // Path(name) is location + "/" + name
	opts     options

	mu      sync.Mutex
	spools  map[string]*spool    // temporary files being written, by name
	expires map[string]time.Time // expiry metadata of objects, by name
	closed  bool

	health health // the store's state: health.go
}

// metaExpires is the object metadata key that holds the expiry the
// engine recorded with Chtimes, in RFC 3339 with nanoseconds.
const metaExpires = "lro-expires"

// New returns the FS of the objects of bucket whose keys start with
// prefix, which is empty (the bucket's root) or ends in "/". The bucket
// stays the caller's: Close does not close it.
func New(bucket *blob.Bucket, prefix string, opts ...Option) (*FS, error) {
	if bucket == nil {
		return nil, errors.New("blobfs: nil bucket")
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("blobfs: prefix %q must be empty or end in \"/\"", prefix)
	}
	if strings.HasPrefix(prefix, "/") || strings.Contains(prefix, "//") {
		return nil, fmt.Errorf("blobfs: prefix %q must not start with \"/\" or hold an empty folder (\"//\")", prefix)
	}
	f := &FS{
		bucket:  bucket,
		prefix:  prefix,
		opts:    defaultOptions(),
		spools:  make(map[string]*spool),
		expires: make(map[string]time.Time),
		health:  health{stop: make(chan struct{})},
	}
	for _, opt := range opts {
		opt(&f.opts)
	}
	f.location = f.opts.location
	if f.location == "" {
		f.location = "blob://" + prefix
	}
	f.location = strings.TrimSuffix(f.location, "/")
	return f, nil
}

// key returns the object key of name, refusing a name that is not a plain
// file name: the engine never makes one, and a slash would reach outside
// the prefix's own level.
func (f *FS) key(op, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return f.prefix + name, nil
}

// ctx returns the context of one request.
func (f *FS) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), f.opts.timeout)
}

// Create starts the temporary file name as a private buffer; nothing
// reaches the store before Rename. It fails with fs.ErrExist while a
// buffer of that name is open (the store's own names are checked by
// Rename's create-only upload), and with lro.ErrStoreDown while the
// store is known to be down, so that no file is written for nothing.
func (f *FS) Create(name string) (lro.File, error) {
	if _, err := f.key("open", name); err != nil {
		return nil, err
	}
	if err := f.check("open", name); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrClosed}
	}
	if _, ok := f.spools[name]; ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	}
	s := &spool{name: name, max: f.opts.maxBytes}
	f.spools[name] = s
	return s, nil
}

// Chtimes records mtime, the file's expiry, in the buffer name: it is
// uploaded as the object's metadata. A published object cannot be
// changed (fs.ErrInvalid).
func (f *FS) Chtimes(name string, _, mtime time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.spools[name]
	if !ok {
		return &fs.PathError{Op: "chtimes", Path: name, Err: fs.ErrInvalid}
	}
	s.setExpiry(mtime)
	return nil
}

// Rename uploads the buffer oldname as the object newname, in one request
// that creates the object only if newname does not exist (fs.ErrExist
// otherwise). The object is visible complete or not at all. On failure
// the buffer stays, for Remove to discard.
func (f *FS) Rename(oldname, newname string) error {
	key, err := f.key("rename", newname)
	if err == nil {
		err = f.check("rename", newname)
	}
	if err != nil {
		return err
	}
	f.mu.Lock()
	s, ok := f.spools[oldname]
	f.mu.Unlock()
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	data, expires, err := s.contents()
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	if err := f.upload(key, data, expires); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	f.mu.Lock()
	delete(f.spools, oldname)
	if !expires.IsZero() {
		f.expires[newname] = expires
	}
	f.mu.Unlock()
	return nil
}

// Remove discards the buffer name, or deletes the object name. An object
// that does not exist, deleted by another replica's janitor for example,
// is fs.ErrNotExist.
//
// Of replicas removing the same object at once, exactly one succeeds; the
// others get fs.ErrNotExist, so that a removal is counted and reported
// (OnFileExpired) once across replicas. A store's DELETE succeeds whether
// or not the object exists, so the remover first claims the object: it
// creates, only if none exists, the object .removing/{name} under the
// prefix (which the engine never lists), deletes the object, then the
// claim. A claim older than [staleClaim], left by a replica that stopped
// between the two, is deleted and the removal fails, for the janitor's
// next try.
func (f *FS) Remove(name string) error {
	key, err := f.key("remove", name)
	if err != nil {
		return err
	}
	f.mu.Lock()
	if s, ok := f.spools[name]; ok {
		delete(f.spools, name)
		f.mu.Unlock()
		s.discard()
		return nil
	}
	f.mu.Unlock()
	if err := f.check("remove", name); err != nil {
		return err
	}
	err = f.removeOnce(name, key)
	f.mu.Lock()
	if err == nil || isNotFound(err) || errors.Is(err, fs.ErrNotExist) {
		delete(f.expires, name)
	}
	f.mu.Unlock()
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: mapErr(err)}
	}
	return nil
}

// Path returns the URL of name: the location, a slash and the name.
func (f *FS) Path(name string) string { return f.location + "/" + name }

// Remote reports true: the files are not on this machine, so the engine
// gives descriptors the native guidance (lro_extract, resources/read).
func (f *FS) Remote() bool { return true }

// Close discards the buffers of files not yet published, stops the probe
// of a store found down, and closes the bucket when [Open] opened it.
func (f *FS) Close() error {
	f.stopProbes()
	f.mu.Lock()
	spools := f.spools
	f.spools, f.closed = make(map[string]*spool), true
	f.mu.Unlock()
	for _, s := range spools {
		s.discard()
	}
	if f.ownsB {
		return f.bucket.Close()
	}
	return nil
}

var _ lro.FS = (*FS)(nil)

// claimDir is the folder under the prefix of the removal claims.
const claimDir = ".removing/"

// staleClaim is the age past which a removal claim is taken for one a
// stopped replica left.
const staleClaim = 10 * time.Minute

// removeOnce deletes the object key of name, if this FS is the one that
// claims its removal; see Remove.
func (f *FS) removeOnce(name, key string) error {
	claim := f.prefix + claimDir + name
	ctx, cancel := f.ctx()
	defer cancel()
	err := f.observe(f.bucket.WriteAll(ctx, claim, nil, &blob.WriterOptions{IfNotExist: true, ContentType: "application/octet-stream"}))
	if err != nil {
		if gcerrors.Code(err) != gcerrors.FailedPrecondition && gcerrors.Code(err) != gcerrors.AlreadyExists {
			return err
		}
		// Another replica removes it, or left its claim.
		attrs, aerr := f.bucket.Attributes(ctx, claim)
		if aerr == nil && time.Since(attrs.ModTime) > staleClaim {
			if derr := f.bucket.Delete(ctx, claim); derr != nil && !isNotFound(derr) {
				return derr
			}
			return fmt.Errorf("blobfs: removing %s: a stale claim (%s) was cleared; try again", name, attrs.ModTime.UTC().Format(time.RFC3339))
		}
		return fs.ErrNotExist
	}
	err = f.observe(f.bucket.Delete(ctx, key))
	// A claim that cannot be deleted now is cleared by the next removal
	// of this name once stale; the object is gone either way.
	_ = f.bucket.Delete(ctx, claim)
	return err
}
