package lro_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/mcplro/lro"
)

// BenchmarkExtractFirstSecond measures, on an offload of 100,000 full
// memories (67.8 MB), an agent's first lro_extract calls of a process in
// its default configuration, each iteration with a pool of workers of its
// own (issue 40, items 4 and 6): lro_extract registered (its workers start
// in the background), the file offloaded, the machine left idle until the
// workers are (the agent reads the descriptor meanwhile); then, timed, the
// call (first), the same call again (second, answered from the workers'
// caches) and, for a question, a different question of the same file
// (other); then the same records offloaded again, as a new file, and the
// machine left idle again, the same call of that file (fresh-file: the
// same work as the first call, on workers that have run before). It
// reports each one's milliseconds, second/first (issue 40: at most 0.2
// for a question, as recipes do) and first-2warm-ms, the first call's
// time less twice the warm one's: the warm call is fresh-file, the call
// that does the first call's work with warm workers (issue 40: at most
// 200 ms, the workers ready before the first call), and
// first-2second-ms the same against the cached answer.
//
//	go test -run '^$' -bench 'ExtractFirstSecond' -benchtime 3x .
func BenchmarkExtractFirstSecond(b *testing.B) {
	if !lro.ExtractWorkersSupported() {
		b.Skip("no worker processes on this platform")
	}
	recs := memories(b, 100_000, lro.DetailFull)
	dir := benchDir(b)
	where := map[string]any{"where": []any{map[string]any{"field": "memory_type", "op": "eq", "value": "semantic"}}, "select": []any{"id", "title"}}
	group := map[string]any{"group_by": "namespace", "aggregate": map[string]any{"op": "count"}}
	sortq := map[string]any{"sort": map[string]any{"field": "provenance.confidence", "desc": true}, "limit": 10}
	sumq := map[string]any{"aggregate": map[string]any{"op": "sum", "field": "provenance.confidence"}}
	search := map[string]any{"recipe": 3, "params": map[string]any{"keyword": "quasar"}}
	pools := 0
	for _, c := range []struct {
		name         string
		first, other map[string]any
	}{
		{"question=where", where, group},
		{"question=group", group, sortq},
		{"question=sort", sortq, sumq},
		{"recipe=3", search, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var first, second, other, fresh time.Duration
			for b.Loop() {
				b.StopTimer()
				pools++
				// A pool of its own: a configuration no other iteration
				// has, the same as the default but for a few bytes.
				o := newOffloader(b, func(cfg *lro.Config) { cfg.OutputDir = dir },
					lro.WithExtractLimits(lro.ExtractLimits{MemoryBudget: lro.DefaultExtractMemoryBudget + uint64(pools)<<12}))
				o.Host().ExtractToolDefinition() // registered: the workers start
				offload := func() string {
					out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: recs})
					if err != nil || out.Action != lro.Offloaded {
						b.Fatal(err, out.Action)
					}
					waitWorkersIdle(b, o)
					return out.Response.FilePath
				}
				path := offload()
				call := func(path string, args map[string]any) time.Duration {
					a := map[string]any{"file_path": path}
					for k, v := range args {
						a[k] = v
					}
					start := time.Now()
					if _, err := o.Extract(context.Background(), a); err != nil {
						b.Fatal(err)
					}
					return time.Since(start)
				}
				b.StartTimer()
				first += call(path, c.first)
				b.StopTimer()
				second += call(path, c.first)
				if c.other != nil {
					other += call(path, c.other)
				}
				os.Remove(path)
				path = offload()
				fresh += call(path, c.first)
				for _, pid := range lro.ExtractWorkerPIDs(o) {
					syscall.Kill(pid, syscall.SIGKILL) // this iteration's pool, ours
				}
				o.Close()
				os.Remove(path)
				b.StartTimer()
			}
			n := float64(b.N)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / n }
			b.ReportMetric(ms(first), "first-ms")
			b.ReportMetric(ms(second), "second-ms")
			b.ReportMetric(second.Seconds()/first.Seconds(), "second/first")
			b.ReportMetric(ms(fresh), "fresh-file-ms")
			b.ReportMetric(ms(first)-2*ms(fresh), "first-2warm-ms")
			b.ReportMetric(ms(first)-2*ms(second), "first-2second-ms")
			if c.other != nil {
				b.ReportMetric(ms(other), "other-ms")
				b.ReportMetric(other.Seconds()/first.Seconds(), "other/first")
			}
		})
	}
}

// waitWorkersIdle waits until o's workers have started and none has held
// a query for a second: the idle machine an agent's first call finds, a
// model taking a second at least to read a descriptor and write its call
// (a prefetch that finds the workers starting tries again 250 ms later).
func waitWorkersIdle(b *testing.B, o *lro.Offloader) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for quiet := 0; quiet < 100; {
		if time.Now().After(deadline) {
			b.Fatal("the workers did not start, or stayed busy, for 2 minutes")
		}
		if len(lro.ExtractWorkerPIDs(o)) >= 2 && lro.ExtractWorkersBusy(o) == 0 {
			quiet++
		} else {
			quiet = 0
		}
		time.Sleep(10 * time.Millisecond)
	}
}
