package store

import (
	"context"
	"log/slog"
	"time"
)

// FileExpiredEvent describes a file the janitor deleted.
type FileExpiredEvent struct {
	Path    string
	Created time.Time // from the ULID in the file name
	// TTL is how long the file was to live: Expires - Created, which for
	// a file of another process of the same name may differ from this
	// Offloader's TTL.
	TTL time.Duration
	// Expires is when it could be deleted: the expiry recorded in the
	// file (see lro.WithName), never before Created + TTL.
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

// Observer is told what a Store does that its owner reports (hooks,
// metrics, the log). Each field may be nil.
type Observer struct {
	// Logger logs the janitor's failures and the failures of an object
	// store; nil logs nothing.
	Logger *slog.Logger
	// Expired is called after the janitor deleted a file (or after a
	// write deleted an expired one to make room).
	Expired func(context.Context, FileExpiredEvent)
	// StoreError counts a failure of an object store, met during what
	// (offload, lro_extract, resources/read, janitor), of kind (see
	// [ErrorKind]).
	StoreError func(ctx context.Context, during, kind string)
	// StoreState counts a change of an object store's state: "down" when
	// a request found it down, "up" when a probe found it answering.
	StoreState func(ctx context.Context, state string)
}

// expired reports e to the Observer.
func (o Observer) expired(ctx context.Context, e FileExpiredEvent) {
	if o.Expired != nil {
		o.Expired(ctx, e)
	}
}
