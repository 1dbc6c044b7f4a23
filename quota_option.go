package lro

// Options of the output directory: whose files are whose, and how much of
// the disk they may take. Config.MaxDirBytes is the quota itself; these
// bound a single file and the file system as a whole.

// The default free-space reserve (see [WithMinFreeBytes]) is
// defaultMinFreePercent of the file system, at most defaultMinFreeMax: in
// the manner of journald's SystemKeepFree, a share of a small file system
// (a 512 MiB tmpfs keeps 25 MiB) and a fixed amount of a large one.
const (
	defaultMinFreePercent = 5
	defaultMinFreeMax     = 1 << 30
)

// dirOptions are set by the options of this file.
type dirOptions struct {
	name         string // WithName; empty means defaultName
	maxFile      int64  // WithMaxFileBytes, when maxFileSet
	maxFileSet   bool
	minFree      int64 // WithMinFreeBytes, when minFreeSet
	minFreeSet   bool
	maxResult    int64 // WithMaxResultBytes, when maxResultSet
	maxResultSet bool
}

// WithName sets the name the Offloader goes by in its directory; by
// default it is the executable's base name. Every file carries a tag
// derived from the name (in the random part of the ULID of its file name),
// and an Offloader reads (lro_extract), evicts and expires only files of
// its own name: servers of different names may share a directory without
// touching each other's files, while a new process of the same server
// still cleans up the files of earlier ones. Give each server its MCP
// server name (the same in every process of it), for example when several
// servers are one executable run with different arguments.
func WithName(name string) Option {
	return func(o *options) { o.dir.name = name }
}

// WithMaxFileBytes caps the size of one offloaded file: a result whose
// file would be larger gets the truncated inline fallback with a warning
// ([ErrFileTooLarge]). The default is [DefaultMaxFileBytes]; n <= 0 means
// no cap besides Config.MaxDirBytes.
func WithMaxFileBytes(n int64) Option {
	return func(o *options) { o.dir.maxFile, o.dir.maxFileSet = n, true }
}

// WithMinFreeBytes keeps n bytes free on the file system of the output
// directory: a result whose file would leave less gets the truncated
// inline fallback with a warning ([ErrLowDiskSpace]); nothing is evicted
// for it, since the space may be another program's to free. The default
// keeps 5% of the file system free, at most 1 GiB; n <= 0 means no
// reserve. The free space is read with statfs on Linux, macOS and
// FreeBSD, and through an FS's DiskSpace method (see [FS]); elsewhere
// there is no reserve.
func WithMinFreeBytes(n int64) Option {
	return func(o *options) { o.dir.minFree, o.dir.minFreeSet = n, true }
}

// WithMaxResultBytes caps the size of a tool result the middleware
// offloads: a result whose text or structured content is larger gets the
// truncated inline fallback with a warning and a WriteFailedEvent
// ([ErrResultTooLarge]), and no file. Finding its records costs no memory
// beyond the result itself, but writing and describing it costs time and
// disk that one call should not take. The default is the per-file cap
// (see [WithMaxFileBytes]), whose file such a result would not fit
// anyway; n <= 0 means no cap.
func WithMaxResultBytes(n int64) Option {
	return func(o *options) { o.dir.maxResult, o.dir.maxResultSet = n, true }
}

// resultCap returns the cap on a result's size, 0 for none.
func (d dirOptions) resultCap() int64 {
	switch {
	case !d.maxResultSet:
		return d.fileCap()
	case d.maxResult > 0:
		return d.maxResult
	}
	return 0
}

// fileCap returns the per-file cap, 0 for none.
func (d dirOptions) fileCap() int64 {
	switch {
	case !d.maxFileSet:
		return DefaultMaxFileBytes
	case d.maxFile > 0:
		return d.maxFile
	}
	return 0
}

// reserve returns the bytes to keep free on a file system of total bytes.
func (d dirOptions) reserve(total int64) int64 {
	switch {
	case !d.minFreeSet:
		return min(total/100*defaultMinFreePercent, defaultMinFreeMax)
	case d.minFree > 0:
		return d.minFree
	}
	return 0
}
