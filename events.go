package lro

import "time"

// Hooks are called when something worth observing happens. Each is
// optional (nil means not called), is called synchronously on the goroutine
// that caused the event, and must be quick and safe for concurrent use.
// Events are also logged when a logger is set with [WithLogger].
type Hooks struct {
	// OnOffload is called after a file has been published.
	OnOffload func(OffloadEvent)
	// OnWriteFailed is called when a file could not be written and the
	// result falls back to an inline, truncated one (the specification's
	// OffloadWriteFailed event). Err says why: a write error, or
	// [ErrOverQuota], [ErrFileTooLarge] or [ErrLowDiskSpace].
	OnWriteFailed func(WriteFailedEvent)
	// OnFileExpired is called after the janitor has deleted a file whose
	// TTL passed (the specification's OffloadFileExpired event), or a
	// temporary file that a crashed writer left behind.
	OnFileExpired func(FileExpiredEvent)
	// OnFileEvicted is called after a file was deleted before its TTL
	// passed, to keep the files of this Offloader's name under
	// Config.MaxDirBytes. It is called on the goroutine of the offload
	// that needed the room, before that offload returns.
	OnFileEvicted func(FileEvictedEvent)
}

// OffloadEvent describes a file that has just been published.
type OffloadEvent struct {
	Operation string
	Path      string        // absolute path of the file
	Count     int           // records in the file
	Tokens    int           // estimated tokens kept out of the context
	Bytes     int64         // size of the file
	Duration  time.Duration // time taken to write and publish it
}

// WriteFailedEvent describes a write that failed.
type WriteFailedEvent struct {
	Operation string
	Path      string // the path the file would have had
	Count     int    // records in the set
	Kept      int    // records returned inline
	Tokens    int    // estimated tokens of the whole set
	Err       error  // what went wrong
}

// FileExpiredEvent describes a file the janitor deleted.
type FileExpiredEvent struct {
	Path    string
	Created time.Time // from the ULID in the file name
	// TTL is how long the file was to live: Expires - Created, which for
	// a file of another process of the same name may differ from this
	// Offloader's TTL.
	TTL time.Duration
	// Expires is when it could be deleted: the expiry recorded in the
	// file (see [WithName]), never before Created + TTL.
	Expires time.Time
}

// FileEvictedEvent describes a file deleted before its TTL passed, and why.
type FileEvictedEvent struct {
	Path    string
	Bytes   int64     // its size, now free
	Created time.Time // from the ULID in the file name
	Expires time.Time // when its TTL would have passed
	// For is the path of the file that needed the room.
	For string
	// Reason says why, for a log line: the quota, the bytes in use and
	// the bytes needed.
	Reason string
	// Used is the bytes of this Offloader's files and of files being
	// written before the eviction; Need the size of the new file; Quota
	// is Config.MaxDirBytes. Used + Need was over Quota.
	Used, Need, Quota int64
}
