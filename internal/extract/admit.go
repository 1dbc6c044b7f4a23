package extract

import (
	"context"
	"time"

	"github.com/mcplro/lro/internal/admit"
)

// extractCalls admits the lro_extract calls of the process, and its
// resources/read of offloaded files (see Host.ReadResource), on every
// host: Host.Extract and Host.ReadResource enter it before they open a
// file, so no adapter serves one without it. Before it existed, every
// call decoded its file (several times the file's size) before waiting
// for its turn, and 800 concurrent calls took 1.6 GiB; now a call waits
// for its place before it reads anything, and one whose bytes do not fit
// the budget is refused and told when to retry (1,600 concurrent
// resource reads took 1,055 MiB). An agent's parallel calls queue in
// their session's line, and the sessions take turns (see package admit):
// a call waits for its place at most callWait, and only a session that
// loops fills its line. The budget is the process's: it is shared by its
// Offloaders, each checking its own limits against it.
var extractCalls = admit.New("lro_extract calls and resource reads")

// enterCall admits a call under lim, for the session ctx names; the
// ticket's Leave must be called when it ends.
func enterCall(ctx context.Context, lim Limits) (*admit.Ticket, error) {
	return extractCalls.Enter(ctx, admit.Request{Session: admit.SessionOf(ctx), Limit: lim.MaxCalls, Wait: callWait, Hold: lim.Timeout + time.Second, Spare: true})
}

// withCallBacklog returns ctx telling the worker pool's line how many
// more calls of its session hold or wait here (admit.WithBacklog): a
// session looping on calls passes this admission a few at a time, and
// would look to the pool like one that asks now and then, taking the
// worker kept spare for those (issue 40).
func withCallBacklog(ctx context.Context) context.Context {
	session := admit.SessionOf(ctx)
	return admit.WithBacklog(ctx, func() int { return extractCalls.Demand(session) - 1 })
}

// callWait bounds a call's wait for its place: admit.Wait, which an
// agent's parallel calls do not reach.
const callWait = admit.Wait

// enterRead admits a resource read under lim, for the session ctx names,
// as a call, but with one read of a session waiting, a second at most:
// reads come from a host, not from a model's parallel calls, and each
// read waiting is a whole file's answer more that a client which does
// not read its answers makes the server hold (issue 30's stdio case).
func enterRead(ctx context.Context, lim Limits) (*admit.Ticket, error) {
	return extractCalls.Enter(ctx, admit.Request{Session: admit.SessionOf(ctx), Limit: lim.MaxCalls, Wait: readWait, Depth: 1, Hold: lim.Timeout + time.Second, Spare: true})
}

// readWait bounds a resource read's wait for its place.
const readWait = time.Second
