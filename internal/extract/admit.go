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
// for its turn, and 800 concurrent calls took 1.6 GiB; now a call that
// does not fit the budget is refused at once, and told when to retry,
// instead of waiting and holding memory and a handler of the server
// (1,600 concurrent resource reads took 1,055 MiB). A call waits for a
// place at most callWait, one call a session, so that callers looping
// cannot keep every place (waiting for a worker, say) from a session that
// asks now and then; a session refused keeps its turn (see
// admit.ClaimHold). The budget is the process's: it
// is shared by its Offloaders, each checking its own limits against it.
var extractCalls = admit.New("lro_extract calls and resource reads")

// enterCall admits a call under lim, for the session ctx names; the
// ticket's Leave must be called when it ends.
func enterCall(ctx context.Context, lim Limits) (*admit.Ticket, error) {
	return extractCalls.Enter(ctx, admit.Request{Session: admit.SessionOf(ctx), Limit: lim.MaxCalls, Wait: callWait, Hold: lim.Timeout + time.Second})
}

// callWait bounds a call's wait for a place: short, since a waiting call
// holds a handler of the server.
const callWait = time.Second
