package gosdk

import (
	"context"

	"github.com/mcplro/lro"
)

// Collect hands the middleware the complete result set of the current tool
// call, to be judged instead of what the handler returns. It is
// [lro.Collect] under a second name, kept so that existing code builds.
//
// Deprecated: call [lro.Collect], which works the same under either SDK's
// middleware, beside [lro.CollectSeq] for a set read one record at a time.
func Collect[T any](ctx context.Context, records []T, scores []float64) bool {
	return lro.Collect(ctx, records, scores)
}
