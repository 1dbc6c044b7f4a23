//go:build unix

package extractworker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/admit"
)

// benchPool returns a pool of its own, its idle workers stopped when the
// benchmark ends.
func benchPool(b *testing.B, cfg Config) *Pool {
	b.Helper()
	cfg.CacheBytes = 256<<20 + testPools.Add(1) // a pool per benchmark
	p := PoolFor(cfg)
	b.Cleanup(func() { stopIdle(p) })
	return p
}

func stopIdle(p *Pool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range slices.Clone(p.procs) {
		if w.cmd != nil && !w.busy {
			p.drop(w)
		}
	}
}

// benchQuery is an ordinary question: a search through every record.
const benchQuery = `select(.title | test("record 1.*7$")) | .id`

// benchRecords is the size of the benchmarks' file.
const benchRecords = 20_000

// runOnce runs benchQuery for the session, and says whether it was
// answered.
func runOnce(p *Pool, session, path string, id FileID) error {
	resp, err := p.Run(admit.WithSession(context.Background(), session), request(path, id, benchQuery, 10*time.Second), 10*time.Second, 1<<20)
	if err != nil {
		return err
	}
	if resp.Failure != nil {
		return resp.Failure
	}
	return nil
}

// BenchmarkPoolParallel runs sessions × calls parallel queries at once
// (issue 40: an agent's eight parallel calls, seven refused), on a pool
// of the default size (2 workers, up to 4), and reports the batch's wall
// time over the sum of the calls' single times measured in the same run
// (the floor: one call at a time, warm), and the calls refused (busy) of
// each batch.
func BenchmarkPoolParallel(b *testing.B) {
	for _, c := range []struct{ sessions, calls int }{{1, 8}, {1, 16}, {8, 1}, {8, 4}} {
		b.Run(fmt.Sprintf("%dx%d", c.sessions, c.calls), func(b *testing.B) {
			b.ReportAllocs()
			p := benchPool(b, Config{Workers: 2, MaxWorkers: 4})
			path, id := jsonlFile(b, benchRecords)
			for range 4 { // the workers started, the file decoded in each
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() { runOnce(p, "warm", path, id) })
				}
				wg.Wait()
			}
			var single time.Duration
			const singles = 8
			for range singles {
				start := time.Now()
				if err := runOnce(p, "single", path, id); err != nil {
					b.Fatal(err)
				}
				single += time.Since(start)
			}
			single /= singles
			refused, other := 0, error(nil)
			var mu sync.Mutex
			var batch time.Duration
			for b.Loop() {
				start := time.Now()
				var wg sync.WaitGroup
				for s := range c.sessions {
					for range c.calls {
						wg.Go(func() {
							err := runOnce(p, fmt.Sprint("s", s), path, id)
							mu.Lock()
							defer mu.Unlock()
							var busy *admit.BusyError
							var poolBusy *BusyError
							switch {
							case errors.As(err, &busy), errors.As(err, &poolBusy):
								refused++
							case err != nil:
								other = err
							}
						})
					}
				}
				wg.Wait()
				batch += time.Since(start)
			}
			if other != nil {
				b.Fatal(other)
			}
			n := float64(b.N)
			b.ReportMetric(float64(single.Microseconds())/1e3, "single-ms")
			b.ReportMetric(batch.Seconds()/n/(single.Seconds()*float64(c.sessions*c.calls)), "batch/sum-of-singles")
			b.ReportMetric(float64(refused)/n, "refused/batch")
		})
	}
}

// BenchmarkPoolFirstCall measures the first query of a pool (issue 40:
// 6.1 s where later ones took 9-350 ms): "cold" starts its worker in the
// call, "prestarted" finds it started in the background (as lro_extract's
// registration and every offload do) and decodes the file; each reports
// its ratio to the same query again, warm, in the same run.
func BenchmarkPoolFirstCall(b *testing.B) {
	path, id := jsonlFile(b, benchRecords)
	for _, prestart := range []bool{false, true} {
		name := "cold"
		if prestart {
			name = "prestarted"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var first, warm time.Duration
			for b.Loop() {
				b.StopTimer()
				p := PoolFor(Config{Workers: 1, MaxWorkers: 1, CacheBytes: 256<<20 + testPools.Add(1)})
				if prestart {
					p.Prestart()
					for len(p.Stats().PIDs) == 0 {
						time.Sleep(time.Millisecond)
					}
				}
				b.StartTimer()
				start := time.Now()
				if err := runOnce(p, "s", path, id); err != nil {
					b.Fatal(err)
				}
				first += time.Since(start)
				b.StopTimer()
				start = time.Now()
				if err := runOnce(p, "s", path, id); err != nil {
					b.Fatal(err)
				}
				warm += time.Since(start)
				stopIdle(p)
				b.StartTimer()
			}
			b.ReportMetric(float64(first.Microseconds())/1e3/float64(b.N), "first-ms")
			b.ReportMetric(float64(warm.Microseconds())/1e3/float64(b.N), "warm-ms")
			b.ReportMetric(first.Seconds()/warm.Seconds(), "first/warm")
		})
	}
}
