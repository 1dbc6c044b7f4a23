package gosdk

import (
	"context"

	"github.com/mcplro/lro"
)

// Collect hands the middleware the complete result set of the current tool
// call, to be judged instead of what the handler returns; it is
// [lro.Collect], which works the same under either SDK's middleware. When
// it returns true the set will be offloaded and the handler may return at
// once: whatever it returns is replaced by the descriptor.
func Collect[T any](ctx context.Context, records []T, scores []float64) bool {
	return lro.Collect(ctx, records, scores)
}
