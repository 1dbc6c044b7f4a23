package extractworker

import (
	"context"
	"slices"
	"time"

	"github.com/mcplro/lro/internal/admit"
)

// prefetchSession is the session of the pool's line that prefetches
// take their place in: one like any caller's, so that they take turns.
const prefetchSession = "lro prefetch"

// Prefetch runs req in the background in a worker that is idle now, so
// that the worker's caches hold the file when a call asks of it (issue
// 40: a question's first call of 100,000 memories decoded the file, many
// times the cost of the next). It is best effort, and never stands in a
// caller's way: it starts only when no query holds a place in the pool's
// line and a worker is idle (the others stay free for calls), it never
// starts a worker, and a worker that has the file decoded already is left
// alone. It reports whether it started; done, when not nil, is called
// with the response once the worker answered (nil when it did not).
func (p *Pool) Prefetch(req *Request, timeout time.Duration, done func(*Response)) bool {
	if !supported {
		return false
	}
	ctx := admit.WithSession(context.Background(), prefetchSession)
	place, err := p.line.Enter(ctx, admit.Request{Session: prefetchSession, Limit: 1, Hold: timeout + killGrace})
	if err != nil {
		return false // a query holds a place: this is no idle pool
	}
	key := req.File.Key()
	p.mu.Lock()
	w := p.idleFor(key)
	if w == nil || slices.Contains(w.files, key) || len(p.waiting) > 0 {
		p.mu.Unlock()
		place.Leave()
		return false
	}
	p.take(w, timeout)
	p.mu.Unlock()
	go func() {
		resp, err := w.exchange(req, timeout, 64<<10)
		p.release(w, key, resp)
		place.Leave()
		if done != nil {
			if err != nil {
				resp = nil
			}
			done(resp)
		}
	}()
	return true
}
