package host

import "context"

// A ProgressFunc sends the client a notifications/progress for the request
// being served: progress so far, and total when known (zero when not).
// Adapters set one in a request's context when the client sent a progress
// token; lro calls it from long work (an lro_extract query past a second).
type ProgressFunc func(ctx context.Context, progress, total float64, message string)

type progressKey struct{}

// WithProgress returns ctx carrying f, the request's progress sender.
func WithProgress(ctx context.Context, f ProgressFunc) context.Context {
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, f)
}

// ProgressOf returns the progress sender of ctx, or nil when the client
// asked for none.
func ProgressOf(ctx context.Context) ProgressFunc {
	f, _ := ctx.Value(progressKey{}).(ProgressFunc)
	return f
}
