package extract

import (
	"context"
	"fmt"
	"time"

	"github.com/mcplro/lro/internal/progress"
)

// A long lro_extract query tells a client that asked for progress that it
// still runs: first after progressDelay, then every progressEvery (two a
// second), with the query's deadline as the total, the most it can take.
const (
	progressDelay = time.Second
	progressEvery = 500 * time.Millisecond
)

// reportProgress starts the reports of a call begun at start whose query
// stops at the latest after timeout; the function it returns ends them.
func reportProgress(ctx context.Context, start time.Time, timeout time.Duration) (stop func()) {
	return progress.Start(ctx, start, progressDelay, progressEvery, func(elapsed time.Duration) (float64, float64, string) {
		total := timeout.Seconds()
		if elapsed > timeout {
			total = 0 // it waited for its turn first: no bound is known
		}
		return elapsed.Seconds(), total, fmt.Sprintf("lro_extract: the query has run %.1f s of at most %s", elapsed.Seconds(), timeout)
	})
}
