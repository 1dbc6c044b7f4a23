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
	// OffloadWriteFailed event).
	OnWriteFailed func(WriteFailedEvent)
	// OnFileExpired is called after the janitor has deleted a file whose
	// TTL passed (the specification's OffloadFileExpired event).
	OnFileExpired func(FileExpiredEvent)
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
	TTL     time.Duration
}
