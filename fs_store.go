package lro

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Stores: an output_dir that is a URL (s3://bucket/prefix?region=...) names
// an object store instead of a directory, so that replicas of a server
// share their offloaded files. This package opens none itself, so that a
// program without object storage does not compile a cloud SDK: a store
// package registers its URL schemes in its init, as database/sql drivers
// do, and the program imports it for that effect:
//
//	import _ "github.com/mcplro/lro/blobfs" // s3://
//
// Files of a store are not on the model's machine: their descriptors
// point to lro_extract and resources/read (see [FS], Remote).

// A StoreOpener opens the [FS] that an output_dir URL of its scheme names.
// The URL is the whole of Config.OutputDir, parsed. The FS should not
// contact the store yet (New calls the opener, and a store that is down
// must make offloads fall back, not New fail); if it implements io.Closer,
// [Offloader.Close] closes it.
type StoreOpener func(ctx context.Context, u *url.URL) (FS, error)

var stores = struct {
	sync.RWMutex
	m map[string]StoreOpener
}{m: make(map[string]StoreOpener)}

// RegisterStore makes an output_dir URL of scheme (such as "s3") open its
// [FS] with open. A store package calls it from its init. It panics if
// open is nil, the scheme is not a valid URL scheme of two characters or
// more, or the scheme is registered already: these are mistakes in the
// program, not in its configuration.
func RegisterStore(scheme string, open StoreOpener) {
	if open == nil {
		panic("lro: RegisterStore: nil opener for scheme " + scheme)
	}
	if !validScheme(scheme) {
		panic(fmt.Sprintf("lro: RegisterStore: %q is not a URL scheme (a letter, then letters, digits, '+', '-' or '.'; two characters or more)", scheme))
	}
	scheme = strings.ToLower(scheme)
	stores.Lock()
	defer stores.Unlock()
	if _, dup := stores.m[scheme]; dup {
		panic("lro: RegisterStore: scheme " + scheme + " registered twice")
	}
	stores.m[scheme] = open
}

// StoreSchemes returns the registered store URL schemes, sorted.
func StoreSchemes() []string {
	stores.RLock()
	defer stores.RUnlock()
	out := make([]string, 0, len(stores.m))
	for s := range stores.m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// storeScheme returns the scheme of dir when dir is a store URL
// (scheme://...), lower-cased. A one-letter scheme is a Windows drive
// (C://x), not a store.
func storeScheme(dir string) (string, bool) {
	scheme, _, ok := strings.Cut(dir, "://")
	if !ok || !validScheme(scheme) {
		return "", false
	}
	return strings.ToLower(scheme), true
}

// validScheme reports whether s is an RFC 3986 scheme of two characters
// or more.
func validScheme(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return true
}

// checkStoreURL is Config.Validate's check of an output_dir that is a
// store URL: it must parse, and its scheme must be registered.
func checkStoreURL(dir string) error {
	scheme, ok := storeScheme(dir)
	if !ok {
		return nil
	}
	if _, err := url.Parse(dir); err != nil {
		return &ConfigError{"output_dir", dir, fmt.Sprintf("not a valid store URL: %v", err)}
	}
	stores.RLock()
	_, found := stores.m[scheme]
	stores.RUnlock()
	if found {
		return nil
	}
	known := "none"
	if s := StoreSchemes(); len(s) > 0 {
		known = strings.Join(s, ", ")
	}
	return &ConfigError{"output_dir", dir, fmt.Sprintf(
		"no object store is registered for the URL scheme %q (registered: %s); add import _ \"github.com/mcplro/lro/blobfs\" to the program for s3://, or register the scheme with lro.RegisterStore",
		scheme, known)}
}

// storeTimeout bounds the opening of a store by New.
const storeTimeout = 30 * time.Second

// openStore opens the store that the URL dir names, whose scheme
// Config.Validate has checked. A store that cannot be opened gives an FS
// on which every operation fails with the reason, so that each offload
// falls back with it in the warning (as a directory that cannot be used
// does) instead of New failing.
func openStore(dir string) FS {
	scheme, _ := storeScheme(dir)
	stores.RLock()
	open := stores.m[scheme]
	stores.RUnlock()
	u, err := url.Parse(dir)
	if err == nil && open == nil {
		err = fmt.Errorf("no object store is registered for the URL scheme %q", scheme)
	}
	var fsys FS
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		fsys, err = open(ctx, u)
		cancel()
		if err == nil && fsys == nil {
			err = fmt.Errorf("the opener of scheme %q returned no FS", scheme)
		}
	}
	if err != nil {
		return &brokenStore{url: strings.TrimSuffix(redactURL(dir), "/"), err: fmt.Errorf("lro: opening the store %s: %w", redactURL(dir), err)}
	}
	return fsys
}

// redactURL returns dir without its query, which may hold settings that
// are not for the model's eyes, and without user information.
func redactURL(dir string) string {
	u, err := url.Parse(dir)
	if err != nil {
		scheme, _ := storeScheme(dir)
		return scheme + "://..."
	}
	u.RawQuery, u.User, u.Fragment = "", nil, ""
	return u.String()
}

// brokenStore is a store that could not be opened: every operation fails
// with why.
type brokenStore struct {
	url string
	err error
}

func (b *brokenStore) Create(string) (File, error)                { return nil, b.err }
func (b *brokenStore) Rename(string, string) error                { return b.err }
func (b *brokenStore) Remove(string) error                        { return b.err }
func (b *brokenStore) Open(string) (fs.File, error)               { return nil, b.err }
func (b *brokenStore) ReadDir() ([]fs.DirEntry, error)            { return nil, b.err }
func (b *brokenStore) Path(name string) string                    { return b.url + "/" + name }
func (b *brokenStore) Remote() bool                               { return true }
func (b *brokenStore) Chtimes(string, time.Time, time.Time) error { return b.err }

// remoteFS is the optional method of an FS whose files are not on this
// machine's file system (see [FS]).
type remoteFS interface {
	Remote() bool
}

// isRemote reports whether fsys keeps its files where a shell cannot
// reach them.
func isRemote(fsys FS) bool {
	r, ok := fsys.(remoteFS)
	return ok && r.Remote()
}

// extractPath returns what lro_extract looks a file_path up by: the
// file_path itself when it is a URL and the FS is a store (cleaning it as
// a file path would fold its "//"), the cleaned path when it is absolute,
// or "" when it is neither.
func (o *Offloader) extractPath(path, clean string) string {
	if _, ok := storeScheme(path); ok && isRemote(o.opts.fs) {
		return path
	}
	if filepath.IsAbs(clean) {
		return clean
	}
	return ""
}

// storeError is a failure of an object store (an FS that is Remote) to
// answer a read. Its Error is a sentence for the model, which names no
// endpoint, query parameter or credential of the store; Unwrap returns
// the store's own error, which goes to the log (see storeFailed).
type storeError struct{ err error }

func (e *storeError) Error() string { return storeTrouble(e.err) + "; try again later" }
func (e *storeError) Unwrap() error { return e.err }

// storeTrouble says what went wrong with a store, in words for the model:
// never the store's own error, which may name an internal host or a
// signed URL.
func storeTrouble(err error) string {
	switch storeErrorKind(err) {
	case "timeout":
		return "the file store did not answer in time"
	case "permission":
		return "the file store refused access"
	case "too_large":
		return "the result is larger than one offloaded file may be"
	case "quota":
		return "the offloaded files' quota is used up"
	}
	return "the file store could not be reached"
}

// storeErrorKind classifies a store's error: timeout, permission,
// unavailable, or too_large and quota for the engine's own refusals.
func storeErrorKind(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, fs.ErrPermission):
		return "permission"
	case errors.Is(err, ErrFileTooLarge):
		return "too_large"
	case errors.Is(err, ErrOverQuota):
		return "quota"
	}
	return "unavailable"
}

// fallbackWarning is the warning of a result truncated because its file
// could not be written for err. A directory's error is told as it is (it
// names this machine's path and what to fix); a store's is told in plain
// words, since its error may name internal hosts: the whole of it goes to
// the log and the WriteFailedEvent.
func (o *Offloader) fallbackWarning(err error, kept, count int) string {
	if !isRemote(o.opts.fs) {
		return fmt.Sprintf("lro: offloading failed (%v); the result is truncated to %d of %d records", err, kept, count)
	}
	again := "call the tool again later for the whole result"
	switch storeErrorKind(err) {
	case "too_large", "quota":
		again = "narrow the call to get the rest"
	}
	return fmt.Sprintf("lro: offloading failed (%s); the result is truncated to %d of %d records; %s", storeTrouble(err), kept, count, again)
}

// storeLogEvery is the least time between two log lines of store
// failures of reads and listings: an outage logs once per burst, with
// the number of failures not logged since the last line.
const storeLogEvery = time.Minute

// storeLog spaces out the log lines of store failures.
type storeLog struct {
	mu     sync.Mutex
	last   time.Time
	missed int
}

// storeFailed counts and logs err when it is a failure of the store
// (a *storeError in its chain), for what (lro_extract, resources/read,
// janitor). The first failure of a burst is logged, with the store's own
// error; the next ones within storeLogEvery are only counted. It reports
// whether err was the store's.
func (o *Offloader) storeFailed(ctx context.Context, what string, err error) bool {
	var se *storeError
	if !errors.As(err, &se) {
		return false
	}
	o.countStoreError(ctx, what, se.err)
	l := o.opts.logger
	if l == nil {
		return true
	}
	o.storeLog.mu.Lock()
	now := time.Now()
	if !o.storeLog.last.IsZero() && now.Sub(o.storeLog.last) < storeLogEvery {
		o.storeLog.missed++
		o.storeLog.mu.Unlock()
		return true
	}
	missed := o.storeLog.missed
	o.storeLog.last, o.storeLog.missed = now, 0
	o.storeLog.mu.Unlock()
	l.LogAttrs(ctx, slog.LevelWarn, "lro: the file store failed",
		slog.String("during", what), slog.String("kind", storeErrorKind(se.err)),
		slog.Any("error", se.err), slog.Int("not_logged_since_last", missed))
	return true
}

// countStoreError counts err, met during what, in lro.store.errors when
// the FS is an object store and err is not a file that is simply gone.
func (o *Offloader) countStoreError(ctx context.Context, what string, err error) {
	if err == nil || !isRemote(o.opts.fs) || errors.Is(err, fs.ErrNotExist) {
		return
	}
	kind := storeErrorKind(err)
	if kind == "too_large" || kind == "quota" {
		return // the engine's refusal, not the store's failure
	}
	o.metrics.storeError(ctx, what, kind)
}
