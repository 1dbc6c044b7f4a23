package store

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
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

// Scheme returns the scheme of dir when dir is a store URL
// (scheme://...), lower-cased. A one-letter scheme is a Windows drive
// (C://x), not a store.
func Scheme(dir string) (string, bool) {
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

// Registered reports whether an opener is registered for scheme.
func Registered(scheme string) bool {
	stores.RLock()
	defer stores.RUnlock()
	_, found := stores.m[scheme]
	return found
}

// storeTimeout bounds the opening of a store by New.
const storeTimeout = 30 * time.Second

// Open opens the store that the URL dir names, whose scheme
// Config.Validate has checked. A store that cannot be opened gives an FS
// on which every operation fails with the reason, so that each offload
// falls back with it in the warning (as a directory that cannot be used
// does) instead of New failing.
func Open(dir string) FS {
	scheme, _ := Scheme(dir)
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
		return &brokenStore{url: strings.TrimSuffix(redactURL(dir), "/"), err: fmt.Errorf("%w: opening the store %s: %w", ErrStoreMisconfigured, redactURL(dir), err)}
	}
	return fsys
}

// redactURL returns dir without its query, which may hold settings that
// are not for the model's eyes, and without user information.
func redactURL(dir string) string {
	u, err := url.Parse(dir)
	if err != nil {
		scheme, _ := Scheme(dir)
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

// IsRemote reports whether fsys keeps its files where a shell cannot
// reach them.
func IsRemote(fsys FS) bool {
	r, ok := fsys.(remoteFS)
	return ok && r.Remote()
}

// ExtractPath returns what lro_extract looks a file_path up by: the
// file_path itself when it is a URL and the FS is a store (cleaning it as
// a file path would fold its "//"), the cleaned path when it is absolute,
// or "" when it is neither.
func ExtractPath(fsys FS, path, clean string) string {
	if _, ok := Scheme(path); ok && IsRemote(fsys) {
		return path
	}
	if filepath.IsAbs(clean) {
		return clean
	}
	return ""
}
