package proxy

import (
	"context"
	"sync"
	"time"
)

// pacer spaces events at least minResync apart, however often they are
// asked for: the listings of a remote's tools that its announcements of
// a change ask for, and the announcements of a local server's tool list
// changes passed to the client (which lists the tools again at each). A
// server that announces a change without pause costs one listing a
// second, on both paths.
type pacer struct {
	mu   sync.Mutex
	last time.Time // when the last event happened, or is due
}

// delay reserves the next event's time and returns how long until it:
// zero when it may happen now.
func (pc *pacer) delay() time.Duration {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	now := time.Now()
	next := pc.last.Add(minResync)
	if pc.last.IsZero() || !next.After(now) {
		pc.last = now
		return 0
	}
	pc.last = next
	return next.Sub(now)
}

// mark records an event that happens now, unpaced: the next paced one
// waits for minResync after it.
func (pc *pacer) mark() {
	pc.mu.Lock()
	pc.last = time.Now()
	pc.mu.Unlock()
}

// wait waits for the time delay reserves, or for ctx to end.
func (pc *pacer) wait(ctx context.Context) error {
	d := pc.delay()
	if d == 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
