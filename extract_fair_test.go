package lro_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/mcpgo"
	"github.com/stretchr/testify/assert"
)

// TestExtractFairBesideLoopingCallers reproduces issue 30's denial of
// lro_extract: callers looping on queries that hold their worker to the
// deadline held both workers, and since a refusal is instant, whoever
// looped took the worker that came free. An ordinary caller got 0/37
// answered beside 2 such callers, 0/56 beside 16, against 39/39 beside
// one. A call now waits in line a little, one call a session, and a
// freed worker goes to the session that used the workers least: at least
// half of the ordinary caller's calls are answered.
func TestExtractFairBesideLoopingCallers(t *testing.T) {
	for _, load := range []struct{ looping, sessions int }{{16, 16}, {2, 2}, {16, 1}} {
		looping := load.looping
		t.Run(fmt.Sprintf("%d looping callers in %d sessions", load.looping, load.sessions), func(t *testing.T) {
			// 10-20 s each: the default suite proves the rule on the
			// admission itself (internal/admit's TestFreedPlaceGoesTo...)
			// and the pool (TestPoolOneWaiterASession); CI runs these.
			testenv.SkipUnlessFull(t)
			o := newOffloader(t, nil, lro.WithExtractLimits(lro.ExtractLimits{Timeout: time.Second}))
			s := memserver.New(testStore, o)
			mcpgo.AddExtractTool(s, o)
			c := connect(t, s)
			path := offloadedPath(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 200, "detail": "full"}))
			extract(t, c, map[string]any{"file_path": path, "recipe": 6}) // start the workers

			var stops []func() (int64, int64)
			for range load.sessions {
				stops = append(stops, hostileLoad(t, connect(t, s), path, looping/load.sessions, []string{`last(range(1e12))`}))
			}
			assert.Eventually(t, func() bool { return lro.ExtractWorkersBusy(o) >= 2 }, 10*time.Second, 10*time.Millisecond, "the looping callers hold the workers")
			answered, calls := ordinaryCalls(t, c, path, 10)
			var hostile, busy int64
			var wg sync.WaitGroup
			var mu sync.Mutex
			for _, stop := range stops {
				wg.Go(func() {
					a, b := stop()
					mu.Lock()
					hostile, busy = hostile+a, busy+b
					mu.Unlock()
				})
			}
			wg.Wait()
			waitIdle(t, o, time.Second)
			t.Logf("beside %d looping callers (%d calls, %d told busy): the ordinary caller got %d/%d answered", looping, hostile, busy, answered, calls)
			assert.GreaterOrEqual(t, 2*answered, calls, "at least half answered")
		})
	}
}

var retryRE = regexp.MustCompile(`retry in (\d+) s`)

// ordinaryCalls makes n lro_extract calls of recipe 6 as a model would:
// one at a time, after a refusal waiting as long as it says (2 s at
// most). It returns how many were answered.
func ordinaryCalls(t *testing.T, c *client.Client, path string, n int) (answered, calls int) {
	for range n {
		res, err := c.CallTool(context.Background(), toolRequest(lro.ExtractToolName, map[string]any{"file_path": path, "recipe": 6}))
		if err != nil {
			t.Fatalf("lro_extract: %v", err)
		}
		calls++
		text := fmt.Sprint(res.Content)
		if !res.IsError {
			answered++
			continue
		}
		if !strings.Contains(text, "busy") {
			t.Fatalf("lro_extract failed otherwise than busy: %.300s", text)
		}
		wait := time.Second
		if m := retryRE.FindStringSubmatch(text); m != nil {
			s, _ := strconv.Atoi(m[1])
			wait = min(time.Duration(s)*time.Second, 2*time.Second)
		}
		time.Sleep(wait)
	}
	return answered, calls
}
