package lro

import (
	"context"
	"io/fs"
	"net/url"
	"strings"

	"github.com/mcplro/lro/internal/store"
)

// FS is the directory that offloaded files live in. Names are plain file
// names, never paths: the engine does not create subdirectories.
//
// Implementations must be safe for concurrent use. [DirFS] is the default;
// lrotest.MemFS keeps files in memory for tests and can inject faults.
//
// An FS may also have these methods, which the engine uses when present
// (DirFS and lrotest.MemFS have both):
//
//   - Chtimes(name string, atime, mtime time.Time) error sets the times
//     of name. The engine records each file's expiry as its modification
//     time before publishing it, so that every offloader sharing the
//     directory knows when the file may go; without Chtimes, they judge
//     the file by their own TTL.
//   - DiskSpace() (avail, total int64, err error) reports the bytes free
//     to this user and the size of the file system the files are on, for
//     the free-space reserve of [WithMinFreeBytes]; without it, or when it
//     fails, there is no reserve.
//   - Remote() bool reports whether the files are kept where a shell on
//     the model's machine cannot reach them (an object store, see
//     [RegisterStore]); when it reports true, descriptors always carry the
//     native guidance, which points to lro_extract and resources/read,
//     and Path may return a URL (s3://bucket/prefix/name) rather than an
//     absolute path. DirFS and lrotest.MemFS do not have it.
//   - Stat(name string) (fs.FileInfo, error) describes the file name (its
//     size and modification time) without reading it: for an object
//     store, one metadata request. lro_extract then finds its local copy
//     of a file it has read before without reading the file again.
//   - WatchAvailability(fn func(available bool, cause error)) (stop
//     func()) reports the outages of a store that fails fast while it is
//     down (blobfs does: its calls then wrap [ErrStoreDown]); the engine
//     logs and counts each change of state rather than each call.
type FS interface {
	// Create creates the file name for writing, private to its owner
	// (0600). It must fail, with an error wrapping fs.ErrExist, when any
	// entry of that name exists already, a symbolic link included.
	Create(name string) (File, error)
	// Rename publishes oldname as newname atomically: a reader sees either
	// no newname or the complete file. It must not replace an existing
	// newname (fail with an error wrapping fs.ErrExist instead).
	Rename(oldname, newname string) error
	// Remove deletes name. It must not follow a symbolic link.
	Remove(name string) error
	// Open opens the regular file name for reading. It must refuse a
	// symbolic link or anything that is not a regular file.
	Open(name string) (fs.File, error)
	// ReadDir lists the directory. Each entry's Type describes the entry
	// itself, not the target of a link.
	ReadDir() ([]fs.DirEntry, error)
	// Path returns the absolute path of name, the one handed to the model.
	Path(name string) string
}

// The store works with its own interface, whose method set is this one
// exactly: each converts to the other.
var (
	_ store.FS = FS(nil)
	_ FS       = store.FS(nil)
)

// File is a file being written by the engine: what [FS.Create] returns.
// It is io.WriteCloser, so that an FS (lrotest.MemFS among them) need not
// import this package to implement it.
type File = store.File

// DefaultOutputDir returns the directory used when Config.OutputDir is
// empty: {system temp dir}/lro-{uid}. The directory is private to the user
// (0700), because the system temporary directory is shared and a result set
// may hold anything a tool returned. Its name is short because the path
// appears in every recipe of every descriptor.
func DefaultOutputDir() string { return store.DefaultOutputDir() }

// DirFS returns the [FS] of the directory dir, reached only through an
// os.Root: no name can escape it by "..", an absolute path or a symbolic
// link. The directory is created with mode 0700 when it does not exist. It
// must be owned by this user and not writable by others (who could
// otherwise delete, replace or plant files in it); on Unix a directory
// that is not is refused, with an error that says how to fix it. It is
// opened on first use and reopened if it disappears or is replaced, so a
// directory that cannot be used yet makes each offload fall back (with
// that error in the warning), not New fail.
func DirFS(dir string) FS { return store.DirFS(dir) }

// dirInUse returns the directory fsys writes to, as its Path writes it,
// for [Offloader.Config]: configured when it is a store URL (its Path
// may differ from the URL given) or when Path does not end with the name
// it is given.
func dirInUse(fsys FS, configured string) string {
	if _, ok := store.Scheme(configured); ok {
		return configured
	}
	const probe = "lro-probe.jsonl"
	p := fsys.Path(probe)
	dir, ok := strings.CutSuffix(p, probe)
	if !ok || dir == "" {
		return configured
	}
	if trimmed := strings.TrimRight(dir, `/\`); trimmed != "" {
		dir = trimmed
	}
	return dir
}

// A StoreOpener opens the [FS] that an output_dir URL of its scheme names.
// The URL is the whole of Config.OutputDir, parsed. The FS should not
// contact the store yet (New calls the opener, and a store that is down
// must make offloads fall back, not New fail); if it implements io.Closer,
// [Offloader.Close] closes it.
//
// Stores: an output_dir that is a URL (s3://bucket/prefix?region=...)
// names an object store instead of a directory, so that replicas of a
// server share their offloaded files. This package opens none itself, so
// that a program without object storage does not compile a cloud SDK: a
// store package registers its URL schemes in its init, as database/sql
// drivers do, and the program imports it for that effect:
//
//	import _ "github.com/mcplro/lro/blobfs" // s3://
//
// Files of a store are not on the model's machine: their descriptors
// point to lro_extract and resources/read (see [FS], Remote).
type StoreOpener func(ctx context.Context, u *url.URL) (FS, error)

// RegisterStore makes an output_dir URL of scheme (such as "s3") open its
// [FS] with open. A store package calls it from its init. It panics if
// open is nil, the scheme is not a valid URL scheme of two characters or
// more, or the scheme is registered already: these are mistakes in the
// program, not in its configuration.
func RegisterStore(scheme string, open StoreOpener) {
	var o store.StoreOpener // nil when open is: the store's panic names it
	if open != nil {
		o = func(ctx context.Context, u *url.URL) (store.FS, error) { return open(ctx, u) }
	}
	store.RegisterStore(scheme, o)
}

// StoreSchemes returns the registered store URL schemes, sorted.
func StoreSchemes() []string { return store.StoreSchemes() }
