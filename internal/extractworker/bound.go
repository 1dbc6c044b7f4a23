package extractworker

import (
	"context"
	"time"
)

// A query's time bound (Limits.Timeout) is the CPU time its worker uses:
// what the query costs, whatever else the machine runs. Workers run below
// the server's priority, so beside a build a query of 0.8 s of CPU took
// 10.4 s of wall time (at nice 10), and a wall-clock bound stopped it. The wall-clock bound stays as
// a backstop, wallFactor times larger plus wallSlack, for a worker that
// gets no CPU at all (stopped, starved): its caller must not wait forever.
// The slack is for small bounds: on a loaded machine a worker waits
// seconds for its turn, whatever its query.
const (
	wallFactor = 4
	wallSlack  = 2 * time.Second
)

// WallBound is the wall-clock backstop of a query whose CPU time is
// bounded by cpu.
func WallBound(cpu time.Duration) time.Duration { return wallFactor*cpu + wallSlack }

// cpuCheck is how often a worker compares the CPU time its query used
// with its bound.
const cpuCheck = 20 * time.Millisecond

// boundCPU returns ctx canceled, with CPUFailure(bound) as its cause, once
// this process has used bound of CPU time from now; stop ends the watch.
// A worker runs one query at a time, so the process's CPU time is the
// query's (its collections included). Where the system does not tell
// (processCPU is zero), only the wall-clock backstop applies.
func boundCPU(ctx context.Context, bound time.Duration) (_ context.Context, used func() time.Duration, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	start := processCPU()
	used = func() time.Duration { return processCPU() - start }
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(cpuCheck)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if used() >= bound {
					cancel(CPUFailure(bound))
					return
				}
			}
		}
	}()
	return ctx, used, func() { close(done); cancel(nil) }
}
