package admit

import "context"

type sessionKey struct{}

// WithSession returns ctx naming the session its requests are admitted
// for: an adapter calls it with the host's session id before it hands a
// request to the library.
func WithSession(ctx context.Context, session string) context.Context {
	return context.WithValue(ctx, sessionKey{}, session)
}

// SessionOf returns the session ctx names, empty when none.
func SessionOf(ctx context.Context) string {
	s, _ := ctx.Value(sessionKey{}).(string)
	return s
}

type outerKey struct{}

// Inside returns ctx naming t, the place held by the caller that makes
// requests with it (an lro_extract call's place, for the query the call
// runs in a worker): an admission then judges a request that keeps a
// place spare ([Request.Spare]) by its session's requests in t's
// admission too. A session that sends sixteen calls at once holds many
// places there even when its first query finds nothing held or waiting
// here; an agent that asks one call at a time holds t only.
//
// t's admission must not wait for a place of the admissions that take
// requests with ctx (it locks them in that order: here, then t's).
func Inside(ctx context.Context, t *Ticket) context.Context {
	return context.WithValue(ctx, outerKey{}, t)
}

// outerOf returns the ticket ctx names (see Inside), unless it is one of
// a itself.
func outerOf(ctx context.Context, a *Admission) *Ticket {
	t, _ := ctx.Value(outerKey{}).(*Ticket)
	if t == nil || t.a == a {
		return nil
	}
	return t
}

// only reports whether t's session holds t only in its admission and
// waits for nothing there; true when t is nil (no other admission). The
// caller holds the lock of the admission asking, never t's.
func (t *Ticket) only() bool {
	if t == nil {
		return true
	}
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	s := t.a.sessions[t.session]
	return s == nil || s.held <= 1 && len(s.line) == 0
}
