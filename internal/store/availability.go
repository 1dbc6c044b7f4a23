package store

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// availabilityFS is the optional method of an FS of a store that fails
// fast while the store is down (blobfs): it calls fn when it finds the
// store down, with the failure that found it, and when it finds it up
// again; stop ends the calls.
type availabilityFS interface {
	WatchAvailability(fn func(available bool, cause error)) (stop func())
}

// availability is what a Store knows of its FS's outages.
type availability struct {
	mu    sync.Mutex
	since time.Time // when the store was found down; zero while up
	stop  func()    // ends the watch; nil when the FS has none
}

// watchAvailability logs and counts the outages of the FS, when it
// reports them: one line and one count when the store is found down, and
// when it answers again, however many calls fail meanwhile (their errors
// wrap ErrStoreDown, and are neither logged nor counted one by one).
func (s *Store) watchAvailability() {
	w, ok := s.fs.(availabilityFS)
	if !ok {
		return
	}
	s.avail.stop = w.WatchAvailability(func(available bool, cause error) {
		ctx := context.Background()
		s.avail.mu.Lock()
		since := s.avail.since
		if available {
			s.avail.since = time.Time{}
		} else {
			s.avail.since = time.Now()
		}
		s.avail.mu.Unlock()
		state := map[bool]string{true: "up", false: "down"}[available]
		if f := s.obs.StoreState; f != nil {
			f(ctx, state)
		}
		l := s.obs.Logger
		if l == nil {
			return
		}
		if available {
			l.LogAttrs(ctx, slog.LevelInfo, "lro: the file store answers again; calls reach it",
				slog.Duration("down_for", time.Since(since).Round(time.Millisecond)))
			return
		}
		l.LogAttrs(ctx, slog.LevelWarn, "lro: the file store is down; calls fall back at once until a probe finds it up",
			slog.String("kind", ErrorKind(cause)), slog.Any("error", cause))
	})
}

// Close ends what the Store watches of its FS.
func (s *Store) Close() {
	if s.avail.stop != nil {
		s.avail.stop()
	}
}
