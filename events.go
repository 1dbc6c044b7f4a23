package lro

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcplro/lro/internal/store"
)

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
	// Duration is the time spent writing before the write failed; zero
	// when no write was tried (a result over the cap on its size).
	Duration time.Duration
}

func (o *engine) emitEvicted(ctx context.Context, e FileEvictedEvent) {
	o.metrics.removed(ctx, "evicted")
	if h := o.opts.hooks.OnFileEvicted; h != nil {
		h(e)
	}
	if l := o.opts.logger; l != nil {
		l.LogAttrs(ctx, slog.LevelInfo, "lro: offloaded file evicted to stay under max_dir_bytes",
			slog.String("path", e.Path), slog.Int64("bytes", e.Bytes), slog.Time("expires", e.Expires),
			slog.String("for", e.For), slog.Int64("used", e.Used), slog.Int64("need", e.Need), slog.Int64("quota", e.Quota))
	}
}

// FileExpiredEvent describes a file the janitor deleted: its Path, when
// it was Created (from the ULID in its name), its TTL (Expires - Created,
// which for a file of another process of the same name may differ from
// this Offloader's) and when it Expires (the expiry recorded in the file,
// see [WithName], never before Created + TTL).
type FileExpiredEvent = store.FileExpiredEvent

// FileEvictedEvent describes a file deleted before its TTL passed, and
// why: its Path, Bytes, Created and Expires; For, the path of the file
// that needed the room; Reason, a sentence for a log line; and Used (the
// bytes of this Offloader's files and of files being written before the
// eviction), Need (the size of the new file) and Quota
// (Config.MaxDirBytes), Used + Need having been over Quota.
type FileEvictedEvent = store.FileEvictedEvent
