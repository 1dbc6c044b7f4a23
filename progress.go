package lro

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcplro/lro/internal/progress"
)

// offloadProgressDelay is when a served call's offload first reports
// progress to a client that sent a progress token (host.WithProgress):
// a second, as lro_extract's queries; tests shorten it.
var offloadProgressDelay atomic.Int64

func init() { offloadProgressDelay.Store(int64(time.Second)) }

// reportOffload starts the progress reports of the offload of a tool's
// result (a 100,000-memory result takes seconds), two a second: the
// seconds it has taken, no total being known before the file is written.
func reportOffload(ctx context.Context, tool string) (stop func()) {
	delay := time.Duration(offloadProgressDelay.Load())
	return progress.Start(ctx, time.Now(), delay, 500*time.Millisecond, func(elapsed time.Duration) (float64, float64, string) {
		return elapsed.Seconds(), 0, fmt.Sprintf("lro: writing %s's result to a file, %.1f s so far", tool, elapsed.Seconds())
	})
}
