// Package progress sends a client that asked for progress (a progress
// token, see host.WithProgress) notifications while long work runs: first
// after a delay, then at a steady pace, and at least one for work that ran
// past the delay, however late the reporting goroutine was scheduled.
package progress

import (
	"context"
	"sync"
	"time"

	"github.com/mcplro/lro/host"
)

// A Report is what one notification says, given the time the work has
// run: its progress, its total (zero when unknown) and a message.
type Report func(elapsed time.Duration) (progress, total float64, message string)

// Start begins the reports of work begun at start, the first after delay,
// then every every (a pace a client can take: a few a second). The
// function it returns ends them; no report follows its return.
func Start(ctx context.Context, start time.Time, delay, every time.Duration, r Report) (stop func()) {
	send := host.ProgressOf(ctx)
	if send == nil {
		return func() {}
	}
	var mu sync.Mutex
	sent, done := 0, false
	report := func() { // under mu, so that reports are ordered
		p, total, msg := r(time.Since(start))
		send(ctx, p, total, msg)
		sent++
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(delay - time.Since(start))
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
			t.Reset(every)
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if sent == 0 && time.Since(start) >= delay {
			report()
		}
		done = true
	}
}
