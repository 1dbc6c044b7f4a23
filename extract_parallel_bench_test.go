package lro_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/admit"
)

// BenchmarkExtractParallel calls lro_extract sessions × calls times at
// once on an offload of 100,000 full memories (issue 40: of an agent's 8
// parallel calls, 7 were refused at once; of 8 sessions, 6), with the
// text search recipe, which reads every record. It reports the calls
// refused (busy) of each batch, and the batch's wall time over the sum of
// the calls' single times measured in the same run (one call at a time,
// warm): the floor.
//
//	go test -run '^$' -bench 'ExtractParallel' -benchtime 2x .
func BenchmarkExtractParallel(b *testing.B) {
	o := newOffloader(b, func(c *lro.Config) { c.OutputDir = benchDir(b) })
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: memories(b, 100_000, lro.DetailFull)})
	if err != nil || out.Action != lro.Offloaded {
		b.Fatal(err)
	}
	args := map[string]any{"file_path": out.Response.FilePath, "recipe": 3, "params": map[string]any{"keyword": "quasar"}}
	call := func(session string) error {
		_, err := o.Extract(admit.WithSession(context.Background(), session), args)
		return err
	}
	for range 2 { // every worker started, the file decoded in each
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { call("warm") })
		}
		wg.Wait()
	}
	var single time.Duration
	const singles = 4
	for range singles {
		start := time.Now()
		if err := call("single"); err != nil {
			b.Fatal(err)
		}
		single += time.Since(start)
	}
	single /= singles
	for _, c := range []struct{ sessions, calls int }{{1, 8}, {1, 16}, {8, 1}, {8, 4}} {
		b.Run(fmt.Sprintf("%dx%d", c.sessions, c.calls), func(b *testing.B) {
			b.ReportAllocs()
			refused := 0
			var mu sync.Mutex
			var other error
			var batch time.Duration
			for b.Loop() {
				start := time.Now()
				var wg sync.WaitGroup
				for s := range c.sessions {
					for range c.calls {
						wg.Go(func() {
							err := call(fmt.Sprint("s", s))
							mu.Lock()
							defer mu.Unlock()
							switch {
							case err != nil && strings.Contains(err.Error(), "busy"):
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
			if other != nil && !errors.Is(other, context.Canceled) {
				b.Fatal(other)
			}
			n := float64(b.N)
			b.ReportMetric(float64(single.Microseconds())/1e3, "single-ms")
			b.ReportMetric(batch.Seconds()/n/(single.Seconds()*float64(c.sessions*c.calls)), "batch/sum-of-singles")
			b.ReportMetric(float64(refused)/n, "refused/batch")
		})
	}
}
