package admit

import (
	"cmp"
	"context"
	"fmt"
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
	waiting  int                 // requests in the sessions' lines
	sessions map[string]*session // of the sessions holding or waiting
	served   uint64              // admissions so far: a session's last one orders the turns
	ends     map[*Ticket]time.Time
}

// New returns an admission whose refusals name its places as what.
func New(what string) *Admission {
	return &Admission{what: what, sessions: map[string]*session{}, ends: map[*Ticket]time.Time{}}
}

// A Request asks for a place.
type Request struct {
	// Session names whom the request is for; requests of one session
	// wait in one line, in order. Empty is one session like any other.
	Session string
	// Limit is how many places may be held with this one; at least 1.
	Limit int
	// Wait bounds the wait in line; zero refuses at once when no place
	// is free, a negative one waits until the context ends.
	Wait time.Duration
	// Hold is how long the request holds its place at most, for the
	// retry hint of refusals and for how long a request asking one at a
	// time may wait (see Spare); zero when it cannot tell.
	Hold time.Duration
	// Depth is how many requests of the session may wait at once; zero
	// is SessionDepth. A request of depth 1 (a resource read, which a
	// client retries when told when) is refused when its Wait ends, even
	// when Spare.
	Depth int
	// Spare keeps the last free place (of a Limit of two or more), while
	// other sessions hold or wait, for a session that holds none and
	// waits with one request at most: a session that asks now and then
	// finds it at once, while sessions that loop on queries running to
	// their deadline, their lines full, hold the others. Such a request
	// is not refused when its wait ends while a place held is not due
	// back yet (its Hold): the next place that comes free is its (unless
	// its Depth is 1). A session alone uses every place.
	Spare bool
	// Backlog, when not nil, returns how many more requests of the
	// session hold or wait in an admission in front of this one (an
	// lro_extract call's, for the worker pool's line). For the spare
	// place they count as waiting here: that admission lets a looping
	// session through a few at a time, so that its line here never fills
	// and it would look like one that asks now and then. It is called
	// with this admission's lock held: it must not enter this admission.
	Backlog func() int
}

// SessionDepth is how many requests of one session may wait in line at
// once: the next one is refused at once. An agent's parallel calls (a
// handful, sixteen at the most seen) wait; only a session that loops
// faster than it is answered reaches it.
const SessionDepth = 16

// Wait is the wait in line the library's callers allow a request: long
// enough for the calls of sixteen sessions to be answered in turn, which
// an agent's parallel calls never reach; a loop that keeps the line full
// is told to retry.
const Wait = 30 * time.Second

// maxSessions bounds the sessions remembered for their turn: past it,
// those holding and waiting nothing are forgotten (and so go first next
// time).
const maxSessions = 4096

type session struct {
	held   int
	served uint64    // the admission's count when it was last admitted
	line   []*waiter // its requests waiting, in arrival order
	// new is when the session first asked, while it is on probation
	// (see spareProbation); zero after.
	new time.Time
}

// spareProbation is how long a session that has just appeared may not
// take the last free place of requests that keep one spare, alone or
// not: long enough for a session that sends many requests at once (a
// loop starting, its line filling) to show it, which a session asking
// now and then never does. Two looping sessions starting together took
// both of two workers with their first requests, and an ordinary
// session's first call waited 9 s for one of them to run to its bound
// (issue 40). It costs a new session that long only for a place that is
// the last free one: an agent's first burst of parallel calls gets its
// second worker 200 ms late. (A var for the tests.)
var spareProbation = 200 * time.Millisecond

// onProbation reports whether s may not take the spare place yet.
func (s *session) onProbation() bool {
	if s.new.IsZero() {
		return false
	}
	if time.Since(s.new) >= spareProbation {
		s.new = time.Time{}
		return false
	}
	return true
}

// waiter is a request waiting in its session's line.
type waiter struct {
	limit   int
	spare   bool
	backlog func() int   // see Request.Backlog; nil: none
	patient bool         // waits past its Wait for a place due back (see Request.Spare)
	ready   chan *Ticket // buffered; receives the place
}

// A Ticket is an admitted request's place.
type Ticket struct {
	a       *Admission
	session string
	bytes   int64
	left    bool
}

// BusyError refuses a request: no place came free in time, or its
// session has SessionDepth requests waiting already, or the bytes are
// spent.
type BusyError struct {
	// Reason says what is taken, with the counts as they were.
	Reason string
	// RetryAfter is when a place should be free again.
	RetryAfter time.Duration
}

// Error says why and when to retry, for the model.
func (e *BusyError) Error() string {
	return fmt.Sprintf("busy: %s; retry in %d s", e.Reason, max(1, int((e.RetryAfter+time.Second-1)/time.Second)))
}

// Enter takes a place for r, waiting in its session's line for at most
// r.Wait; Leave must be called on the ticket it returns. It fails with a
// *BusyError, or the context's cause when ctx ends first.
func (a *Admission) Enter(ctx context.Context, r Request) (*Ticket, error) {
	r.Limit = max(r.Limit, 1)
	w := &waiter{limit: r.Limit, spare: r.Spare, backlog: r.Backlog, patient: r.Spare && r.Depth != 1, ready: make(chan *Ticket, 1)}
	a.mu.Lock()
	s := a.session(r.Session)
	switch {
	case len(s.line) == 0 && a.fits(s, w) && !a.othersFirst(s):
		t := a.grant(s, r.Session, r.Hold)
		a.mu.Unlock()
		return t, nil
	case r.Wait == 0:
		err := a.busy(fmt.Sprintf("%d of %d %s are taken and %d requests wait", a.held, r.Limit, a.what, a.waiting))
		a.mu.Unlock()
		return nil, err
	case len(s.line) >= cmp.Or(r.Depth, SessionDepth):
		err := a.busy(fmt.Sprintf("%d requests of this session wait already for one of %d %s (%d running, %d waiting in all)", len(s.line), r.Limit, a.what, a.held, a.waiting))
		a.mu.Unlock()
		return nil, err
	}
	s.line = append(s.line, w)
	a.waiting++
	probationEnds := s.new
	a.mu.Unlock()

	var timeout <-chan time.Time
	var tm *time.Timer
	if r.Wait > 0 {
		tm = time.NewTimer(r.Wait)
		defer tm.Stop()
		timeout = tm.C
	}
	// A session on probation is looked at again when it ends: the
	// spare place may be its then.
	var probation <-chan time.Time
	if r.Spare && !probationEnds.IsZero() {
		pt := time.NewTimer(time.Until(probationEnds.Add(spareProbation)))
		defer pt.Stop()
		probation = pt.C
	}
	var err error
	waited := r.Wait
wait:
	for {
		select {
		case t := <-w.ready:
			return a.started(t, r.Hold), nil
		case <-probation:
			probation = nil
			a.mu.Lock()
			a.handOver()
			a.mu.Unlock()
			continue
		case <-timeout:
			if due := a.due(s, w); due > 0 {
				tm.Reset(due) // a place is the request's once one is back
				waited += due
				continue
			}
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
		break wait
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
	s.line = slices.DeleteFunc(s.line, func(x *waiter) bool { return x == w })
	a.waiting--
	if err != nil {
		return nil, err
	}
	return nil, a.busy(fmt.Sprintf("no place of %d %s came free within %v (%d running, %d waiting)", r.Limit, a.what, waited.Round(time.Millisecond), a.held, a.waiting))
}

// dueSlack is how long past its Hold a place may take to come back: the
// holder's end (a worker killed at its bound, its answer written).
const dueSlack = time.Second

// due returns how much longer w, a request of the session s whose wait
// has ended, waits: until the first place held is due back (dueSlack
// past its Hold) when w keeps a place spare and asks one at a time,
// since the next place that comes free is its; zero otherwise, or when
// every place is past due (a holder overran its Hold: w is refused rather
// than kept waiting without bound).
func (a *Admission) due(s *session, w *waiter) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !w.patient || w.limit < 2 || s.held > 0 || len(s.line) != 1 || s.line[0] != w {
		return 0
	}
	first := time.Duration(0)
	for _, end := range a.ends {
		if left := time.Until(end) + dueSlack; left > 0 && (first == 0 || left < first) {
			first = left
		}
	}
	return first
}

// othersFirst reports whether another session waits for a place it may
// take now: a newcomer does not pass it. a.mu is held.
func (a *Admission) othersFirst(s *session) bool {
	if a.waiting == 0 {
		return false
	}
	for _, o := range a.sessions {
		if o != s && len(o.line) > 0 && a.fits(o, o.line[0]) {
			return true
		}
	}
	return false
}

// fits reports whether w, a request of the session s (the first of its
// line, or a newcomer when the line is empty), may take a place under
// its limit: one is free, and, when the request keeps one spare, it is not
// the last; or s is alone (it holds every place taken, and only its
// requests wait: an agent alone uses them all); or s holds none and
// waits with this request only, and none in front of this admission
// (Request.Backlog), as a session that asks now and then does, and one
// that loops, its line full, does not; and in either case
// s is not on probation (see spareProbation). a.mu is held.
func (a *Admission) fits(s *session, w *waiter) bool {
	if a.held >= w.limit {
		return false
	}
	if !w.spare || w.limit < 2 || a.held < w.limit-1 {
		return true
	}
	if s.onProbation() {
		return false
	}
	alone := s.held == a.held && a.waiting == len(s.line)
	return alone || s.held == 0 && len(s.line) <= 1 && (w.backlog == nil || w.backlog() <= 0)
}

// Demand returns how many requests of the session named session hold
// a place or wait in line: what a Request.Backlog of an admission behind
// this one reports (less the request itself).
func (a *Admission) Demand(session string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[session]
	if !ok {
		return 0
	}
	return s.held + len(s.line)
}

// started records when t, just handed over, ends at the latest.
func (a *Admission) started(t *Ticket, hold time.Duration) *Ticket {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ends[t] = time.Now().Add(hold)
	return t
}

// session returns the record of the session named s. a.mu is held.
func (a *Admission) session(name string) *session {
	s, ok := a.sessions[name]
	if !ok {
		if len(a.sessions) >= maxSessions {
			for k, x := range a.sessions {
				if x.held == 0 && len(x.line) == 0 {
					delete(a.sessions, k)
				}
			}
		}
		s = &session{new: time.Now()}
		a.sessions[name] = s
	}
	s.onProbation() // ends it, when it has
	return s
}

// before reports whether s takes its turn before o: it holds fewer
// places, or as many but was served longer ago (round robin).
func (s *session) before(o *session) bool {
	if s.held != o.held {
		return s.held < o.held
	}
	return s.served < o.served
}

// grant gives a place to the session s. a.mu is held.
func (a *Admission) grant(s *session, name string, hold time.Duration) *Ticket {
	a.held++
	a.served++
	s.held++
	s.served = a.served
	t := &Ticket{a: a, session: name}
	a.ends[t] = time.Now().Add(hold)
	return t
}

// handOver gives the places free to the first request in line of the
// session whose turn it is (see session.before). a.mu is held.
func (a *Admission) handOver() {
	for a.waiting > 0 {
		var best *session
		var name string
		for k, s := range a.sessions {
			if len(s.line) == 0 || !a.fits(s, s.line[0]) {
				continue
			}
			if best == nil || s.before(best) {
				best, name = s, k
			}
		}
		if best == nil {
			return
		}
		w := best.line[0]
		best.line = best.line[1:]
		a.waiting--
		w.ready <- a.grant(best, name, 0)
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
		return a.busy(fmt.Sprintf("the %d running %s hold %d MiB", a.held, a.what, a.bytes>>20))
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
	}
	a.handOver()
}

// Held returns how many places are taken and how many requests wait.
func (a *Admission) Held() (held, waiting int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held, a.waiting
}

// Bytes returns the bytes the admitted requests hold.
func (a *Admission) Bytes() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bytes
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
