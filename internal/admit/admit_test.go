package admit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func enter(t *testing.T, a *Admission, session string, limit int, wait time.Duration) *Ticket {
	t.Helper()
	tk, err := a.Enter(context.Background(), Request{Session: session, Limit: limit, Wait: wait})
	require.NoError(t, err)
	return tk
}

// waitFor waits until n requests wait in line: a liveness wait, with no
// bound in time asserted.
func waitFor(t *testing.T, a *Admission, n int) {
	t.Helper()
	require.Eventually(t, func() bool { _, w := a.Held(); return w == n }, time.Minute, time.Millisecond)
}

func TestCountsRequestsNotSessions(t *testing.T) {
	a := New("requests")
	t1 := enter(t, a, "s", 2, 0)
	t2 := enter(t, a, "s", 2, 0)
	_, err := a.Enter(context.Background(), Request{Session: "s", Limit: 2})
	var busy *BusyError
	require.ErrorAs(t, err, &busy, "a third request that may not wait is refused")
	assert.Equal(t, "busy: 2 of 2 requests are taken and 0 requests wait; retry in 1 s", err.Error())
	t1.Leave()
	t1.Leave() // twice frees once
	held, _ := a.Held()
	assert.Equal(t, 1, held)
	t2.Leave()
	held, _ = a.Held()
	assert.Zero(t, held)
}

// run lets n requests of each session enter at once, each holding its
// place until the test lets it go, and returns the sessions in the order
// they were admitted.
func run(t *testing.T, a *Admission, limit int, sessions []string, n int) []string {
	t.Helper()
	type grant struct {
		session string
		t       *Ticket
	}
	grants := make(chan grant)
	errs := make(chan error, len(sessions)*n)
	var wg sync.WaitGroup
	for _, s := range sessions {
		for range n {
			wg.Go(func() {
				tk, err := a.Enter(context.Background(), Request{Session: s, Limit: limit, Wait: -1})
				if err != nil {
					errs <- err
					return
				}
				grants <- grant{s, tk}
			})
		}
	}
	var order []string
	for range len(sessions) * n {
		select {
		case g := <-grants:
			order = append(order, g.session)
			g.t.Leave()
		case err := <-errs:
			t.Fatalf("a request was refused: %v", err)
		}
	}
	wg.Wait()
	held, waiting := a.Held()
	assert.Zero(t, held+waiting)
	return order
}

// TestParallelCallsOfOneSessionQueue: sixteen requests of one session at
// once are all admitted (issue 40: 7 of 8 were refused at once).
func TestParallelCallsOfOneSessionQueue(t *testing.T) {
	order := run(t, New("calls"), 2, []string{"agent"}, SessionDepth)
	assert.Len(t, order, SessionDepth)
}

// TestSessionsTimesParallelCallsQueue: eight sessions of four parallel
// requests each are all admitted.
func TestSessionsTimesParallelCallsQueue(t *testing.T) {
	var sessions []string
	for i := range 8 {
		sessions = append(sessions, fmt.Sprint("s", i))
	}
	assert.Len(t, run(t, New("calls"), 4, sessions, 4), 32)
}

// TestTurnsGoRoundRobin: with every place taken, the sessions' waiting
// requests are admitted in turn, one session after the other, whatever
// the number each sends.
func TestTurnsGoRoundRobin(t *testing.T) {
	a := New("calls")
	holder := enter(t, a, "holder", 1, 0)
	type grant struct {
		session string
		t       *Ticket
	}
	grants := make(chan grant, 64)
	send := func(s string, n int) {
		for range n {
			go func() {
				tk, err := a.Enter(context.Background(), Request{Session: s, Limit: 1, Wait: -1})
				if err == nil {
					grants <- grant{s, tk}
				}
			}()
		}
	}
	send("loop1", SessionDepth)
	send("loop2", SessionDepth)
	waitFor(t, a, 2*SessionDepth)
	send("ordinary", 1)
	waitFor(t, a, 2*SessionDepth+1)
	_, err := a.Enter(context.Background(), Request{Session: "loop1", Limit: 1, Wait: -1})
	var busy *BusyError
	require.ErrorAs(t, err, &busy, "past its depth, a session is refused at once")
	assert.Contains(t, err.Error(), fmt.Sprintf("%d requests of this session wait already for one of 1 calls (1 running, %d waiting in all)", SessionDepth, 2*SessionDepth+1))

	holder.Leave()
	var order []string
	for range 2*SessionDepth + 1 {
		g := <-grants
		order = append(order, g.session)
		g.t.Leave()
	}
	assert.Contains(t, order[:3], "ordinary", "the ordinary session's one request is served within the first round")
	for i := 1; i < len(order); i++ {
		if order[i] == order[i-1] {
			t.Fatalf("session %s served twice in a row while others waited: %v", order[i], order)
		}
	}
}

// TestOrdinaryBesideLoopingSessions: two sessions that keep SessionDepth
// requests in line each, re-sending each one answered, and an ordinary
// session asking ten times, one call after the other: each ordinary call
// is admitted after at most one request of each looping session, counted
// from when it entered the line.
func TestOrdinaryBesideLoopingSessions(t *testing.T) {
	a := New("calls")
	holder := enter(t, a, "holder", 1, 0)
	type grant struct {
		session string
		t       *Ticket
	}
	grants := make(chan grant, 64)
	send := func(s string) {
		go func() {
			tk, err := a.Enter(context.Background(), Request{Session: s, Limit: 1, Wait: -1})
			if err == nil {
				grants <- grant{s, tk}
			}
		}()
	}
	for range SessionDepth {
		send("loop1")
		send("loop2")
	}
	send("ordinary")
	waitFor(t, a, 2*SessionDepth+1)
	holder.Leave()
	answered, others := 0, 0
	for answered < 10 {
		g := <-grants
		if g.session == "ordinary" {
			assert.LessOrEqual(t, others, 2, "call %d waited for %d requests of the looping sessions", answered+1, others)
			answered++
			others = 0
		} else {
			others++
		}
		if answered < 10 {
			send(g.session) // the loop asks again; the ordinary session its next question
			waitFor(t, a, 2*SessionDepth+1)
		}
		g.t.Leave()
	}
	assert.Equal(t, 10, answered)
}

func TestWaitIsBounded(t *testing.T) {
	a := New("requests")
	h := enter(t, a, "hostile", 1, 0)
	_, err := a.Enter(context.Background(), Request{Session: "ordinary", Limit: 1, Wait: time.Millisecond})
	require.ErrorAs(t, err, new(*BusyError), "the wait ends")
	assert.Contains(t, err.Error(), "no place of 1 requests came free within 1ms (1 running, 0 waiting)")
	_, waiting := a.Held()
	assert.Zero(t, waiting, "a request whose wait ended leaves the line")
	h.Leave()
	enter(t, a, "ordinary", 1, 0).Leave()
}

func TestEnterEndsWithContext(t *testing.T) {
	a := New("requests")
	h := enter(t, a, "a", 1, 0)
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("gone")
	cancel(cause)
	_, err := a.Enter(ctx, Request{Session: "b", Limit: 1, Wait: -1})
	assert.ErrorIs(t, err, cause)
	_, waiting := a.Held()
	assert.Zero(t, waiting)
	h.Leave()
	held, _ := a.Held()
	assert.Zero(t, held, "nobody waits: the place stays free")
}

func TestReserveBoundsBytes(t *testing.T) {
	a := New("reads")
	t1 := enter(t, a, "a", 4, 0)
	t2 := enter(t, a, "b", 4, 0)
	require.NoError(t, t1.Reserve(80<<20, 100<<20))
	err := t2.Reserve(30<<20, 100<<20)
	require.ErrorAs(t, err, new(*BusyError))
	assert.Contains(t, err.Error(), "the 2 running reads hold 80 MiB")
	require.NoError(t, t1.Reserve(30<<20, 100<<20), "a request alone may pass the bound")
	t1.Leave()
	require.NoError(t, t2.Reserve(90<<20, 100<<20))
	t2.Leave()
}

// TestWaitingUnderASmallLimitHoldsNoFreePlace: a request waiting under a
// small limit does not keep a request of another session from a place
// free under its larger one (each Offloader checks its own bound of a
// shared count).
func TestWaitingUnderASmallLimitHoldsNoFreePlace(t *testing.T) {
	a := New("calls")
	h := enter(t, a, "other", 1, 0)
	in := make(chan *Ticket)
	go func() {
		tk, _ := a.Enter(context.Background(), Request{Session: "s", Limit: 1, Wait: -1})
		in <- tk
	}()
	waitFor(t, a, 1)
	enter(t, a, "t", 3, 0).Leave()
	h.Leave()
	(<-in).Leave()
	held, waiting := a.Held()
	assert.Zero(t, held+waiting)
}

// TestNewcomerDoesNotPassTheLine: a place freed while a session waits is
// its, not a newcomer's that may not wait.
func TestNewcomerDoesNotPassTheLine(t *testing.T) {
	a := New("calls")
	h := enter(t, a, "a", 1, 0)
	in := make(chan *Ticket)
	go func() {
		tk, _ := a.Enter(context.Background(), Request{Session: "b", Limit: 1, Wait: -1})
		in <- tk
	}()
	waitFor(t, a, 1)
	h.Leave()
	b := <-in
	_, err := a.Enter(context.Background(), Request{Session: "c", Limit: 1})
	require.ErrorAs(t, err, new(*BusyError))
	assert.Contains(t, err.Error(), "1 of 1 calls are taken and 0 requests wait")
	b.Leave()
}

// fillLines sends SessionDepth requests of each of sessions at once, as
// looping sessions do; the tickets of those admitted come on the channel
// it returns.
func fillLines(a *Admission, req func(session string) Request, sessions ...string) <-chan *Ticket {
	tickets := make(chan *Ticket, len(sessions)*SessionDepth)
	for _, s := range sessions {
		for range SessionDepth {
			go func() {
				if tk, err := a.Enter(context.Background(), req(s)); err == nil {
					tickets <- tk
				}
			}()
		}
	}
	return tickets
}

// TestSparePlaceForASessionHoldingNone: beside two sessions that keep
// their lines full, requests that keep one place spare leave the last free
// one to a session that holds none and waits for none: an ordinary
// session's call is admitted at once, without waiting for a looping
// session's to end (issue 40: 2 of 9 ordinary calls were answered beside
// two loops).
func TestSparePlaceForASessionHoldingNone(t *testing.T) {
	defer func(d time.Duration) { spareProbation = d }(spareProbation)
	spareProbation = 0 // every session here is new
	a := New("queries")
	req := func(s string) Request { return Request{Session: s, Limit: 4, Wait: -1, Spare: true} }
	first := []*Ticket{enter(t, a, "loop1", 4, 0), enter(t, a, "loop2", 4, 0)}
	tickets := fillLines(a, req, "loop1", "loop2")
	waitFor(t, a, 2*SessionDepth-1) // one took the third place at once
	n, _ := a.Held()
	assert.Equal(t, 3, n, "the looping sessions hold three places of four")
	o, err := a.Enter(context.Background(), Request{Session: "ordinary", Limit: 4, Spare: true})
	require.NoError(t, err, "the spare place is the ordinary session's at once")
	_, err = a.Enter(context.Background(), Request{Session: "ordinary", Limit: 4, Spare: true})
	require.ErrorAs(t, err, new(*BusyError), "a session holding one does not take another")
	o.Leave()
	n, _ = a.Held()
	assert.Equal(t, 3, n, "the spare place is not handed to the lines")
	for _, tk := range first {
		tk.Leave()
	}
	for range 2 * SessionDepth {
		(<-tickets).Leave() // each hands its place over to the next of the lines
	}
	n, w := a.Held()
	assert.Zero(t, n+w)
}

// TestLoopsStartingTogetherLeaveTheSpare: two sessions that start
// looping together, their first requests arriving before their lines
// fill, do not take the spare place between them (issue 40: they took
// both workers, and an ordinary session's first call waited 9 s for one
// of their queries to run to its bound); a session seen before does, at
// once. A session alone, new, gets the spare place when its probation
// ends.
func TestLoopsStartingTogetherLeaveTheSpare(t *testing.T) {
	defer func(d time.Duration) { spareProbation = d }(spareProbation)
	spareProbation = 20 * time.Millisecond
	a := New("workers")
	req := func(s string) Request { return Request{Session: s, Limit: 2, Wait: -1, Spare: true} }
	o, err := a.Enter(context.Background(), req("ordinary"))
	require.NoError(t, err)
	o.Leave()
	time.Sleep(2 * spareProbation) // the ordinary session's probation ends...
	o, err = a.Enter(context.Background(), req("ordinary"))
	require.NoError(t, err)
	o.Leave()                  // ...as it asks again
	spareProbation = time.Hour // the loops' lasts the test

	tickets := fillLines(a, req, "loop1", "loop2")
	waitFor(t, a, 2*SessionDepth-1)
	n, _ := a.Held()
	assert.Equal(t, 1, n, "the loops hold one place of two")
	o, err = a.Enter(context.Background(), Request{Session: "ordinary", Limit: 2, Spare: true})
	require.NoError(t, err, "the spare place is the ordinary session's at once")
	o.Leave()
	for range 2 * SessionDepth {
		(<-tickets).Leave()
	}

	// Alone, a new session waits its probation for its second place.
	spareProbation = 20 * time.Millisecond
	first := enter(t, a, "agent", 2, 0)
	second := make(chan *Ticket)
	go func() {
		tk, err := a.Enter(context.Background(), req("agent"))
		assert.NoError(t, err)
		second <- tk
	}()
	(<-second).Leave()
	first.Leave()
	n, w := a.Held()
	assert.Zero(t, n+w)
}

// TestBacklogCountsForTheSpare: a session with requests waiting in an
// admission in front of this one (lro_extract's calls, before the worker
// pool's line) does not take the spare place however short its line here
// (issue 40: the call admission let a looping session through one at a
// time, and the pool gave it the spare worker); a session without does,
// at once. Demand reports what a backlog counts.
func TestBacklogCountsForTheSpare(t *testing.T) {
	defer func(d time.Duration) { spareProbation = d }(spareProbation)
	spareProbation = 0
	outer, inner := New("calls"), New("workers")
	for range 4 {
		go func() { _, _ = outer.Enter(context.Background(), Request{Session: "loop", Limit: 1, Wait: -1}) }()
	}
	waitFor(t, outer, 3) // one holds the place
	assert.Equal(t, 4, outer.Demand("loop"))
	assert.Zero(t, outer.Demand("ordinary"))

	other := enter(t, inner, "other", 2, 0) // one place of two taken
	in := make(chan *Ticket, 1)
	go func() {
		tk, err := inner.Enter(context.Background(), Request{Session: "loop", Limit: 2, Wait: -1, Spare: true, Backlog: func() int { return outer.Demand("loop") }})
		assert.NoError(t, err)
		in <- tk
	}()
	waitFor(t, inner, 1)
	n, _ := inner.Held()
	assert.Equal(t, 1, n, "the looping session waits, though its line here holds one")
	o, err := inner.Enter(context.Background(), Request{Session: "ordinary", Limit: 2, Spare: true, Backlog: func() int { return outer.Demand("ordinary") }})
	require.NoError(t, err, "the spare place is the ordinary session's at once")
	o.Leave()
	other.Leave()
	(<-in).Leave()
}

// TestDepthBoundsTheSessionsLine: a request may name a shallower line
// than SessionDepth (resource reads: one waiting).
func TestDepthBoundsTheSessionsLine(t *testing.T) {
	a := New("reads")
	h := enter(t, a, "s", 1, 0)
	in := make(chan *Ticket)
	go func() {
		tk, _ := a.Enter(context.Background(), Request{Session: "s", Limit: 1, Wait: -1, Depth: 1})
		in <- tk
	}()
	waitFor(t, a, 1)
	_, err := a.Enter(context.Background(), Request{Session: "s", Limit: 1, Wait: -1, Depth: 1})
	require.ErrorAs(t, err, new(*BusyError))
	assert.Contains(t, err.Error(), "1 requests of this session wait already for one of 1 reads (1 running, 1 waiting in all)")
	h.Leave()
	(<-in).Leave()
}

// TestOneAtATimeWaitsUntilAPlaceIsDue: a request that keeps a place spare
// and asks one at a time is not refused at the end of its wait while a
// place held is not due back yet (its Hold): the next place that comes
// free is its. A looping session's request is refused at its wait. Issue
// 40: an ordinary call waited 30 s behind two queries held 42 s, to their
// wall-clock backstop, and was refused.
func TestOneAtATimeWaitsUntilAPlaceIsDue(t *testing.T) {
	a := New("queries")
	hold := func(s string) *Ticket {
		tk, err := a.Enter(context.Background(), Request{Session: s, Limit: 2, Hold: time.Hour})
		require.NoError(t, err)
		return tk
	}
	q1, q2 := hold("loop1"), hold("loop2")
	loop := make(chan error)
	go func() {
		_, err := a.Enter(context.Background(), Request{Session: "loop1", Limit: 2, Wait: time.Millisecond, Spare: true})
		loop <- err
	}()
	require.ErrorAs(t, <-loop, new(*BusyError), "a session holding a place is refused at the end of its wait")
	in := make(chan *Ticket)
	go func() {
		tk, err := a.Enter(context.Background(), Request{Session: "ordinary", Limit: 2, Wait: time.Millisecond, Spare: true})
		if err != nil {
			panic(err)
		}
		in <- tk
	}()
	waitFor(t, a, 1)
	time.Sleep(20 * time.Millisecond) // its wait of 1 ms has ended: it still waits
	_, w := a.Held()
	assert.Equal(t, 1, w, "the ordinary request waits past its wait, a place being due back within the hour")
	q1.Leave()
	(<-in).Leave()
	q2.Leave()
	n, w := a.Held()
	assert.Zero(t, n+w)
}
