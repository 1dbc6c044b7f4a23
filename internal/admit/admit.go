package admit

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// An Admission hands out places to requests, fairly between sessions.
// The zero value is not usable: make one with [New].
type Admission struct {
	what string // what a place is, for refusals: "lro_extract calls and resource reads"

	mu       sync.Mutex
	held     int
	bytes    int64
	line     []*waiter           // at most one a session, in arrival order
	sessions map[string]*session // of the sessions holding, waiting or claiming
	served   uint64              // admissions so far: a session's last one orders the line
	ends     map[*Ticket]time.Time
}

// New returns an admission whose refusals name its places as what.
func New(what string) *Admission {
	return &Admission{what: what, sessions: map[string]*session{}, ends: map[*Ticket]time.Time{}}
}

// A Request asks for a place.
type Request struct {
	// Session names whom the request is for; requests of one session
	// share its turn. Empty is one session like any other.
	Session string
	// Limit is how many places may be held with this one; at least 1.
	Limit int
	// Wait bounds the wait in line; zero refuses at once, a negative
	// one waits until the context ends.
	Wait time.Duration
	// Hold is how long the request holds its place at most, for the
	// retry hint of refusals; zero when it cannot tell.
	Hold time.Duration
}

// ClaimHold is how long a place freed for a session that was refused
// after its wait is kept for it: a caller told to retry in N seconds finds
// the place that came free meanwhile. A claim not taken up in time is
// given to the next in line.
var ClaimHold = 5 * time.Second

// maxSessions bounds the sessions remembered for their turn: past it,
// those holding nothing are forgotten (and so go first next time).
const maxSessions = 4096

type session struct {
	held   int
	used   float64   // seconds of places held, halved every usageHalfLife
	usedAt time.Time // when used was last brought up to date
	served uint64    // the admission's count when it was last admitted
	wait   *waiter   // its place in line, if any
	kept   *Ticket   // a place kept for it (see ClaimHold), if any
	keep   *time.Timer
}

// waiter is a session's place in line: a request waiting (ready is
// listened to), or the claim of one that was refused after its wait.
type waiter struct {
	session string
	limit   int
	ready   chan *Ticket // buffered; receives the place
	claim   time.Time    // when a claim lapses; zero while a request waits
}

// A Ticket is an admitted request's place.
type Ticket struct {
	a       *Admission
	session string
	bytes   int64
	start   time.Time
	left    bool
}

// BusyError refuses a request: no place came free in time, or its
// session waits in line already, or the bytes are spent.
type BusyError struct {
	// Reason says what is taken.
	Reason string
	// RetryAfter is when a place should be free again.
	RetryAfter time.Duration
}

// Error says why and when to retry, for the model.
func (e *BusyError) Error() string {
	return fmt.Sprintf("busy: %s; retry in %d s", e.Reason, max(1, int((e.RetryAfter+time.Second-1)/time.Second)))
}

// Enter takes a place for r, waiting in line for at most r.Wait; Leave
// must be called on the ticket it returns. It fails with a *BusyError, or
// the context's cause when ctx ends first.
func (a *Admission) Enter(ctx context.Context, r Request) (*Ticket, error) {
	r.Limit = max(r.Limit, 1)
	a.mu.Lock()
	s := a.session(r.Session)
	if t := s.kept; t != nil { // the place kept for this session
		s.kept = nil
		s.keep.Stop()
		a.ends[t] = time.Now().Add(r.Hold)
		a.mu.Unlock()
		return t, nil
	}
	w := s.wait
	if w != nil && !w.claim.IsZero() && a.held < r.Limit {
		a.unqueue(w) // a place is free under this request's limit: the claim is not needed
		w = nil
	}
	switch {
	case w != nil && w.claim.IsZero():
		err := a.busy(fmt.Sprintf("another request of this session waits for one of %d %s", r.Limit, a.what))
		a.mu.Unlock()
		return nil, err
	case w == nil && a.held < r.Limit:
		t := a.grant(s, r.Session, r.Hold)
		a.mu.Unlock()
		return t, nil
	case r.Wait == 0:
		err := a.refuse(s, r)
		a.mu.Unlock()
		return nil, err
	}
	if w == nil {
		w = &waiter{session: r.Session, ready: make(chan *Ticket, 1)}
		a.line = append(a.line, w)
		s.wait = w
	}
	w.limit, w.claim = r.Limit, time.Time{} // a claim taken up waits again, in its place
	a.mu.Unlock()

	var timeout <-chan time.Time
	if r.Wait > 0 {
		tm := time.NewTimer(r.Wait)
		defer tm.Stop()
		timeout = tm.C
	}
	var err error
	select {
	case t := <-w.ready:
		return a.started(t, r.Hold), nil
	case <-timeout:
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case t := <-w.ready: // handed over as the wait ended
		if err == nil {
			a.ends[t] = time.Now().Add(r.Hold)
			return t, nil
		}
		a.leave(t)
		return nil, err
	default:
	}
	if err != nil {
		a.unqueue(w)
		return nil, err
	}
	return nil, a.refuse(s, r)
}

// started records when t, just handed over, ends at the latest.
func (a *Admission) started(t *Ticket, hold time.Duration) *Ticket {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ends[t] = time.Now().Add(hold)
	return t
}

// refuse refuses r, whose session keeps its place in line as a claim
// until it was told to retry and ClaimHold more: the next place that
// comes free for it meanwhile is kept for it. a.mu is held.
func (a *Admission) refuse(s *session, r Request) error {
	if s.wait == nil {
		s.wait = &waiter{session: r.Session, limit: r.Limit, ready: make(chan *Ticket, 1)}
		a.line = append(a.line, s.wait)
	}
	s.wait.claim = time.Now() // not waiting: not counted below
	held, waiting := a.counts()
	err := a.busy(fmt.Sprintf("%d %s are running or waiting", held+waiting, a.what))
	s.wait.claim = s.wait.claim.Add(err.RetryAfter + ClaimHold)
	return err
}

// session returns the record of the session named s. a.mu is held.
func (a *Admission) session(name string) *session {
	s, ok := a.sessions[name]
	if !ok {
		if len(a.sessions) >= maxSessions {
			for k, x := range a.sessions {
				if x.held == 0 && x.wait == nil && x.kept == nil {
					delete(a.sessions, k)
				}
			}
		}
		s = &session{}
		a.sessions[name] = s
	}
	return s
}

// usageHalfLife is how fast a session's use of the places is forgotten.
const usageHalfLife = 30 * time.Second

// usage returns s's use of the places at now, in seconds.
func (s *session) usage(now time.Time) float64 {
	if s.used == 0 {
		return 0
	}
	return s.used * math.Exp2(-now.Sub(s.usedAt).Seconds()/usageHalfLife.Seconds())
}

// use adds a place held for d to s's use.
func (s *session) use(d time.Duration) {
	now := time.Now()
	s.used = s.usage(now) + d.Seconds()
	s.usedAt = now
}

// before reports whether s goes before o in line: it holds fewer places,
// or as many but has used them less lately, or as much but was served
// longer ago.
func (s *session) before(o *session, now time.Time) bool {
	if s.held != o.held {
		return s.held < o.held
	}
	if su, ou := s.usage(now), o.usage(now); su != ou {
		return su < ou
	}
	return s.served < o.served
}

// grant gives a place to the session s. a.mu is held.
func (a *Admission) grant(s *session, name string, hold time.Duration) *Ticket {
	a.held++
	a.served++
	s.held++
	s.served = a.served
	t := &Ticket{a: a, session: name, start: time.Now()}
	a.ends[t] = time.Now().Add(hold)
	return t
}

// unqueue removes w from the line. a.mu is held.
func (a *Admission) unqueue(w *waiter) {
	a.line = slices.DeleteFunc(a.line, func(x *waiter) bool { return x == w })
	if s := a.sessions[w.session]; s != nil && s.wait == w {
		s.wait = nil
	}
}

// handOver gives the places free to the line: each to the waiting
// session that holds the fewest, then was served least recently. A
// claim's place is kept for its session for ClaimHold. a.mu is held.
func (a *Admission) handOver() {
	now := time.Now()
	for {
		var best *waiter
		var bs *session
		for _, w := range slices.Clone(a.line) {
			s := a.sessions[w.session]
			if !w.claim.IsZero() && !w.claim.After(now) {
				a.unqueue(w) // a claim that lapsed
				continue
			}
			if a.held >= w.limit {
				continue
			}
			if best == nil || s.before(bs, now) {
				best, bs = w, s
			}
		}
		if best == nil {
			return
		}
		a.unqueue(best)
		t := a.grant(bs, best.session, ClaimHold)
		if best.claim.IsZero() {
			best.ready <- t
			continue
		}
		bs.kept = t
		bs.keep = time.AfterFunc(ClaimHold, func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			if bs.kept == t {
				bs.kept = nil
				a.leave(t)
			}
		})
	}
}

// Reserve lets t hold n more bytes, if the admitted requests hold no more
// than maxBytes with them. A request alone may pass maxBytes, so that a
// large file is slow rather than never readable.
func (t *Ticket) Reserve(n, maxBytes int64) error {
	a := t.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bytes+n > maxBytes && a.bytes > t.bytes {
		return a.busy(fmt.Sprintf("the running %s hold %d MiB", a.what, a.bytes>>20))
	}
	a.bytes += n
	t.bytes += n
	return nil
}

// Leave frees t's place and its bytes; later calls do nothing.
func (t *Ticket) Leave() {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	t.a.leave(t)
}

// leave is Leave; a.mu is held.
func (a *Admission) leave(t *Ticket) {
	if t.left {
		return
	}
	t.left = true
	a.held--
	a.bytes -= t.bytes
	delete(a.ends, t)
	if s := a.sessions[t.session]; s != nil {
		s.held--
		s.use(time.Since(t.start))
	}
	a.handOver()
}

// Held returns how many places are taken and how many requests wait.
func (a *Admission) Held() (held, waiting int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts()
}

// Bytes returns the bytes the admitted requests hold.
func (a *Admission) Bytes() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bytes
}

// counts is Held; a.mu is held.
func (a *Admission) counts() (held, waiting int) {
	for _, w := range a.line {
		if w.claim.IsZero() {
			waiting++
		}
	}
	return a.held, waiting
}

// busy returns a refusal for reason, with the time until the first place
// is due back. a.mu is held.
func (a *Admission) busy(reason string) *BusyError {
	first := time.Duration(0)
	for _, end := range a.ends {
		if left := time.Until(end); first == 0 || left < first {
			first = left
		}
	}
	return &BusyError{Reason: reason, RetryAfter: max(first, time.Second)}
}
