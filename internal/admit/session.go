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
