package lro_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/internal/testenv"
)

// ordinaryAsks are an agent's calls on an offload of memories: the ten
// recipes of its descriptor and two questions without jq.
func ordinaryAsks(path string) []map[string]any {
	var asks []map[string]any
	for recipe := 1; recipe <= 10; recipe++ {
		args := map[string]any{"file_path": path, "recipe": recipe}
		if recipe == 3 || recipe == 10 {
			args["params"] = map[string]any{"keyword": "quasar"}
		}
		asks = append(asks, args)
	}
	where := []any{map[string]any{"field": "memory_type", "op": "eq", "value": "semantic"}}
	return append(asks,
		map[string]any{"file_path": path, "where": where, "select": []any{"id", "title"}, "limit": 20},
		map[string]any{"file_path": path, "where": where, "aggregate": map[string]any{"op": "count"}},
	)
}

// freshAsks are two calls whose answers no worker has kept (a search of
// titles for keyword, by recipe and by question), asked with another
// keyword in each phase of a test, at the cost of the same calls of the
// phase before: the records they read stay decoded.
func freshAsks(path, keyword string) []map[string]any {
	return []map[string]any{
		{"file_path": path, "recipe": 3, "params": map[string]any{"keyword": keyword}},
		{"file_path": path, "where": []any{map[string]any{"field": "title", "op": "contains", "value": keyword}}, "aggregate": map[string]any{"op": "count"}},
	}
}

// loopingSessions starts sessions sessions that each keep admit.SessionDepth
// calls of query in line, sending the next as one is answered (a model
// told busy retries after 20 ms), until the returned stop is called.
func loopingSessions(o *lro.Offloader, path string, sessions int, query string) (stop func() (calls int64)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var calls atomic.Int64
	for s := range sessions {
		sctx := admit.WithSession(ctx, fmt.Sprint("loop", s))
		for range admit.SessionDepth {
			wg.Go(func() {
				for sctx.Err() == nil {
					_, err := o.Extract(sctx, map[string]any{"file_path": path, "query": query})
					calls.Add(1)
					if err != nil && strings.Contains(err.Error(), "busy") {
						time.Sleep(20 * time.Millisecond)
					}
				}
			})
		}
	}
	return func() int64 {
		cancel()
		wg.Wait()
		return calls.Load()
	}
}

// TestExtractOrdinaryBesideLoopingSessions: issue 40. Beside two sessions
// that loop on queries running to their bound (16 calls each at once, a
// new one as each is answered), an ordinary session's calls (the ten
// recipes and two questions on 100,000 memories, their answers kept from
// before, and two searches of titles for a keyword not asked before, by
// recipe and by question, one at a time) are answered, at least 80% of them (before: a call waited 30 s behind the
// loops' first two queries, held 42 s to their wall-clock backstop, and
// was refused), and it reports how many took within 3× their time alone,
// measured before and after in the same run (the mean of both: the
// machine's load drifts). That bound in time is asserted only with
// LRO_TEST_TIMING=1, on a machine that runs nothing else. It loads the
// machine for minutes: LRO_TEST_LOAD=1 runs it, alone
// (go test -count=1 -run TestExtractOrdinaryBesideLoopingSessions -v .).
func TestExtractOrdinaryBesideLoopingSessions(t *testing.T) {
	testenv.SkipUnlessLoad(t)
	if !lro.ExtractWorkersSupported() {
		t.Skip("no worker processes on this platform")
	}
	o := newOffloader(t, nil)
	path := offloadMemories(t, o, 100_000)
	asks := ordinaryAsks(path)
	// Each phase asks the ordinary calls (their answers kept by then)
	// and two fresh ones: warming, before, beside the loops, after.
	phase := func(keyword string) []map[string]any { return append(slices.Clone(asks), freshAsks(path, keyword)...) }
	ordinary := admit.WithSession(context.Background(), "ordinary")
	alone := func(asks []map[string]any) []time.Duration {
		took := make([]time.Duration, len(asks))
		for i, args := range asks {
			start := time.Now()
			if _, err := o.Extract(ordinary, args); err != nil {
				t.Fatalf("call %d alone: %v", i+1, err)
			}
			took[i] = time.Since(start)
		}
		return took
	}
	// Each call twice at once, twice: both workers know its answer (a
	// worker keeps what it counted), as they will when the loops leave
	// the ordinary session whichever one is free.
	for range 2 {
		for i, args := range phase("failover") {
			var wg sync.WaitGroup
			for s := range 2 {
				wg.Go(func() {
					if _, err := o.Extract(admit.WithSession(context.Background(), fmt.Sprint("warm", s)), args); err != nil {
						t.Errorf("call %d alone: %v", i+1, err)
					}
				})
			}
			wg.Wait()
		}
	}
	before := alone(phase("deadlock"))

	stop := loopingSessions(o, path, 2, `last(range(1e12))`)
	for lro.ExtractWorkersBusy(o) == 0 { // a liveness wait: the loops hold a worker
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second) // the loops' lines fill
	asks = phase("memory leak")
	beside := make([]time.Duration, len(asks))
	errs := make([]error, len(asks))
	for i, args := range asks {
		start := time.Now()
		_, errs[i] = o.Extract(ordinary, args)
		beside[i] = time.Since(start)
	}
	loops := stop()
	waitIdle(t, o, 10*time.Second)
	after := alone(phase("replication lag"))

	answered, within := 0, 0
	for i := range asks {
		quiet := (before[i] + after[i]) / 2
		ratio := beside[i].Seconds() / quiet.Seconds()
		t.Logf("call %2d: alone %7v (%v, %v), beside the loops %7v: %.1f×, %v", i+1, quiet.Round(time.Millisecond), before[i].Round(time.Millisecond), after[i].Round(time.Millisecond), beside[i].Round(time.Millisecond), ratio, errs[i])
		switch {
		case errs[i] == nil:
			answered++
			if ratio <= 3 {
				within++
			}
		case !strings.Contains(errs[i].Error(), "busy"):
			t.Errorf("call %d failed otherwise than busy: %v", i+1, errs[i])
		}
	}
	t.Logf("beside two looping sessions (%d calls): %d of %d answered, %d within 3× their time alone", loops, answered, len(asks), within)
	if 5*answered < 4*len(asks) {
		t.Errorf("%d of %d calls answered, not 80%%", answered, len(asks))
	}
	if testenv.Timing() && 5*within < 4*len(asks) {
		t.Errorf("%d of %d calls answered within 3× their time alone, not 80%%", within, len(asks))
	}
}
