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

type backlogKey struct{}

// WithBacklog returns ctx carrying backlog (see Request.Backlog) for the
// admission its requests enter next: lro_extract's call admission tells
// the worker pool's line how many more calls of the session it holds.
func WithBacklog(ctx context.Context, backlog func() int) context.Context {
	return context.WithValue(ctx, backlogKey{}, backlog)
}

// BacklogOf returns the backlog ctx carries, nil when none.
func BacklogOf(ctx context.Context) func() int {
	b, _ := ctx.Value(backlogKey{}).(func() int)
	return b
}
