package admit

import (
	"context"
	"errors"
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

func TestCountsRequestsNotSessions(t *testing.T) {
	a := New("requests")
	t1 := enter(t, a, "s", 2, 0)
	t2 := enter(t, a, "s", 2, 0)
	_, err := a.Enter(context.Background(), Request{Session: "s", Limit: 2})
	var busy *BusyError
	require.ErrorAs(t, err, &busy, "a third request of the same session is refused")
	assert.Contains(t, err.Error(), "retry in")
	t1.Leave()
	t1.Leave() // twice frees once
	held, _ := a.Held()
	assert.Equal(t, 2, held, "the freed place is kept for the session refused")
	t3 := enter(t, a, "s", 2, 0)
	t2.Leave()
	t3.Leave()
	held, _ = a.Held()
	assert.Zero(t, held)
}

func TestFreedPlaceGoesToTheSessionServedLeast(t *testing.T) {
	a := New("requests")
	h1 := enter(t, a, "hostile", 2, 0)
	h2 := enter(t, a, "hostile", 2, 0)
	hostileIn := make(chan *Ticket)
	go func() {
		tk, _ := a.Enter(context.Background(), Request{Session: "hostile", Limit: 2, Wait: -1})
		hostileIn <- tk
	}()
	require.Eventually(t, func() bool { _, w := a.Held(); return w == 1 }, 5*time.Second, time.Millisecond)
	ordinaryIn := make(chan *Ticket)
	go func() {
		tk, _ := a.Enter(context.Background(), Request{Session: "ordinary", Limit: 2, Wait: -1})
		ordinaryIn <- tk
	}()
	require.Eventually(t, func() bool { _, w := a.Held(); return w == 2 }, 5*time.Second, time.Millisecond)

	_, err := a.Enter(context.Background(), Request{Session: "hostile", Limit: 2, Wait: -1})
	assert.ErrorAs(t, err, new(*BusyError), "one waiter a session: the second is refused at once")

	h1.Leave()
	o := <-ordinaryIn // the hostile session holds one place, the ordinary none
	h2.Leave()
	h3 := <-hostileIn
	o.Leave()
	h3.Leave()
}

func TestWaitIsBoundedAndKeepsAClaim(t *testing.T) {
	defer func(d time.Duration) { ClaimHold = d }(ClaimHold)
	ClaimHold = time.Hour
	a := New("requests")
	h := enter(t, a, "hostile", 1, 0)
	_, err := a.Enter(context.Background(), Request{Session: "ordinary", Limit: 1, Wait: time.Millisecond})
	require.ErrorAs(t, err, new(*BusyError), "the wait ends")
	h.Leave() // the place is kept for the refused session
	_, err = a.Enter(context.Background(), Request{Session: "hostile", Limit: 1})
	require.ErrorAs(t, err, new(*BusyError), "a claimed place is not the newcomer's")
	o := enter(t, a, "ordinary", 1, 0)
	o.Leave()
	h = enter(t, a, "hostile", 1, 0)
	h.Leave()
}

func TestClaimLapses(t *testing.T) {
	defer func(d time.Duration) { ClaimHold = d }(ClaimHold)
	ClaimHold = time.Millisecond
	a := New("requests")
	h := enter(t, a, "hostile", 1, 0)
	_, err := a.Enter(context.Background(), Request{Session: "ordinary", Limit: 1})
	require.ErrorAs(t, err, new(*BusyError))
	h.Leave()
	require.Eventually(t, func() bool { held, _ := a.Held(); return held == 0 }, 5*time.Second, time.Millisecond)
	enter(t, a, "hostile", 1, 0).Leave()
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
	require.NoError(t, t1.Reserve(80, 100))
	assert.ErrorAs(t, t2.Reserve(30, 100), new(*BusyError))
	require.NoError(t, t1.Reserve(30, 100), "a request alone may pass the bound")
	t1.Leave()
	require.NoError(t, t2.Reserve(90, 100))
	t2.Leave()
}

// TestFreedPlaceGoesToTheSessionThatUsedLeast: of two sessions that hold
// nothing and wait, the one that held places for less time lately goes
// first, whoever was served last.
func TestFreedPlaceGoesToTheSessionThatUsedLeast(t *testing.T) {
	a := New("queries")
	long := enter(t, a, "looping", 1, 0)
	time.Sleep(50 * time.Millisecond) // a query held to its deadline
	long.Leave()
	enter(t, a, "ordinary", 1, 0).Leave() // served last, but briefly
	holder := enter(t, a, "third", 1, 0)
	in := make(chan string, 2)
	for _, s := range []string{"looping", "ordinary"} {
		go func() {
			tk, err := a.Enter(context.Background(), Request{Session: s, Limit: 1, Wait: -1})
			if err == nil {
				in <- s
				tk.Leave()
			}
		}()
	}
	require.Eventually(t, func() bool { _, w := a.Held(); return w == 2 }, 5*time.Second, time.Millisecond)
	holder.Leave()
	assert.Equal(t, "ordinary", <-in)
	assert.Equal(t, "looping", <-in)
}

// TestClaimDoesNotRefuseAFreePlace: a session that keeps a claim under a
// small limit is not refused a place free under its next request's
// larger one (each Offloader checks its own bound of a shared count).
func TestClaimDoesNotRefuseAFreePlace(t *testing.T) {
	a := New("calls")
	h := enter(t, a, "other", 1, 0)
	_, err := a.Enter(context.Background(), Request{Session: "s", Limit: 1})
	require.ErrorAs(t, err, new(*BusyError))
	enter(t, a, "s", 3, 0).Leave()
	h.Leave()
	held, waiting := a.Held()
	assert.Zero(t, held+waiting)
}
