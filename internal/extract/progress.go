package extract

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcplro/lro/host"
)

// A long lro_extract query tells a client that asked for progress that it
// still runs: first after progressDelay, then every progressEvery (two a
// second, within the "few a second" a client can take), with the query's
// deadline as the total, the most it can take.
const (
	progressDelay = time.Second
	progressEvery = 500 * time.Millisecond
)

// reportProgress starts the reports of a call begun at start whose query
// stops at the latest after timeout; the function it returns ends them.
// A call that ran past progressDelay has sent at least one report when
// that function returns, however late its goroutine was scheduled.
func reportProgress(ctx context.Context, start time.Time, timeout time.Duration) (stop func()) {
	send := host.ProgressOf(ctx)
	if send == nil {
		return func() {}
	}
	var mu sync.Mutex
	sent, done := 0, false
	report := func() {
		// Under mu, so that reports are ordered and none follows stop.
		elapsed := time.Since(start)
		total := timeout.Seconds()
		if elapsed > timeout {
			total = 0 // it waited for its turn first: no bound is known
		}
		send(ctx, elapsed.Seconds(), total, fmt.Sprintf("lro_extract: the query has run %.1f s of at most %s", elapsed.Seconds(), timeout))
		sent++
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(progressDelay - time.Since(start))
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			mu.Lock()
			if !done {
				report()
			}
			mu.Unlock()
			t.Reset(progressEvery)
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if sent == 0 && time.Since(start) >= progressDelay {
			report()
		}
		done = true
	}
}
