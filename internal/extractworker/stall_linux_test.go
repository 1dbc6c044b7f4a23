//go:build linux

package extractworker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoolReplacesStoppedWorker: a worker stopped from outside (SIGSTOP)
// while idle is not handed a query: two ordinary queries sent at once are
// answered (not stopped at their deadline), the stopped worker is killed
// and replaced. Before, both waited for the 10.5 s deadline and were told
// to narrow the query. No bound in time: a query held to its deadline is
// told it took too long, which a busy machine cannot cause.
func TestPoolReplacesStoppedWorker(t *testing.T) {
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1})
	path, id := jsonlFile(t, 10)
	_, err := p.Run(context.Background(), request(path, id, `.id`, 10*time.Second), 10*time.Second, 1<<20)
	require.NoError(t, err)
	pids := p.Stats().PIDs
	require.Len(t, pids, 1)
	require.NoError(t, syscall.Kill(pids[0], syscall.SIGSTOP))
	t.Cleanup(func() { syscall.Kill(pids[0], syscall.SIGKILL) })

	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			resp, err := p.Run(context.Background(), request(path, id, `select(.id == 4) | .id`, 10*time.Second), 10*time.Second, 1<<20)
			// Told to retry while the worker's replacement starts, as a
			// busy machine may take longer than a call waits in line: a
			// client retries.
			for isBusy(err) {
				resp, err = p.Run(context.Background(), request(path, id, `select(.id == 4) | .id`, 10*time.Second), 10*time.Second, 1<<20)
			}
			require.NoError(t, err)
			require.Nil(t, resp.Failure, "not held until the deadline: %v", resp.Failure)
			assert.Equal(t, []string{"4"}, values(resp))
		})
	}
	wg.Wait()
	assert.NotContains(t, p.Stats().PIDs, pids[0], "the stopped worker was replaced")
	// Killed: the pool sent SIGKILL and waits for the process, which goes
	// (go test's -timeout bounds this wait, not a guess of how long).
	for processExists(pids[0]) {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPoolReplacesWorkerStoppedMidQuery: a worker stopped while it runs a
// query is killed soon, not at the query's deadline, and the query runs
// again on a fresh worker.
func TestPoolReplacesWorkerStoppedMidQuery(t *testing.T) {
	testenv.Parallel(t)
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1})
	path, id := jsonlFile(t, 1)
	_, err := p.Run(context.Background(), request(path, id, `.id`, 10*time.Second), 10*time.Second, 1<<20)
	require.NoError(t, err)
	pids := p.Stats().PIDs
	require.Len(t, pids, 1)

	// A query of a second or so: stopped in the middle.
	n := 3000000
	if raceEnabled {
		n = 300000 // as long, under the race detector
	}
	q := fmt.Sprintf(`reduce range(%d) as $i (0; . + 1)`, n)
	start := time.Now()
	go func() {
		time.Sleep(100 * time.Millisecond)
		syscall.Kill(pids[0], syscall.SIGSTOP)
	}()
	t.Cleanup(func() { syscall.Kill(pids[0], syscall.SIGKILL) })
	// A deadline no busy machine reaches (the worker runs at nice 5): one
	// that held the query until then would answer with a timeout failure.
	resp, err := p.Run(context.Background(), request(path, id, q, 10*time.Minute), 10*time.Minute, 1<<20)
	took := time.Since(start)
	require.NoError(t, err)
	require.Nil(t, resp.Failure, "%v", resp.Failure)
	assert.Equal(t, []string{strconv.Itoa(n)}, values(resp))
	// Not held until the deadline: that would be a timeout failure.
	testenv.Within(t, took, 5*time.Second, "a query whose worker was stopped")
	assert.NotContains(t, p.Stats().PIDs, pids[0])
}

func processExists(pid int) bool {
	// A killed child stays a zombie until waited for: the pool waits.
	return syscall.Kill(pid, 0) == nil
}

// TestPoolReplacesSpentWorker: a worker whose query mapped more than half
// of its memory limit is replaced after it, so that the next query does
// not die at the limit for it (an innocent recipe was told it needed too
// much memory, after a query stopped by the heap watchdog); a worker of
// small queries is kept.
func TestPoolReplacesSpentWorker(t *testing.T) {
	testenv.Parallel(t)
	if !hardLimit {
		t.Skip("no hard memory limit in this build")
	}
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1, MemoryBytes: 256 << 20})
	path, id := jsonlFile(t, 1)
	run := func(q string) *Response {
		// A deadline no busy machine reaches: workers run at nice 5,
		// and two busy loops leave them a twentieth of a core.
		resp, err := p.Run(context.Background(), request(path, id, q, 10*time.Minute), 10*time.Minute, 1<<20)
		require.NoError(t, err)
		return resp
	}
	require.Nil(t, run(`.id`).Failure)
	first := p.Stats().PIDs
	require.Nil(t, run(`[range(100000)] | length`).Failure)
	assert.Equal(t, first, p.Stats().PIDs, "a small query leaves its worker")
	// How much a query maps beyond its live data depends on how far the
	// collector kept up, so no one size lands between half the limit
	// (spent) and all of it (stopped) on every machine: each size is a
	// little larger than the last, from the same worker, until one query
	// both succeeds and leaves its worker spent. A query stopped at the
	// limit costs its worker too; the next size starts on the new one.
	dropped := false
	for _, n := range []int{3000000, 3250000, 3500000, 3000000, 3250000, 3500000} {
		before := p.Stats().PIDs
		resp := run(fmt.Sprintf(`[range(%d)] | length`, n))
		if resp.Failure != nil {
			require.Equal(t, KindLimit, resp.Failure.Kind, "%v", resp.Failure)
			t.Logf("range(%d) met the memory limit: %s", n, resp.Failure.Message)
			continue
		}
		assert.Equal(t, []string{strconv.Itoa(n)}, values(resp))
		// Dropped before its query returns; the next query runs on another.
		if !slices.Contains(p.Stats().PIDs, before[0]) {
			first, dropped = before, true
			break
		}
		t.Logf("range(%d) left its worker under half the limit", n)
	}
	require.True(t, dropped, "a query that succeeded left its worker spent, and the worker was dropped")
	require.Nil(t, run(`.id`).Failure)
	pids := p.Stats().PIDs
	assert.Len(t, pids, 1)
	assert.NotContains(t, pids, first[0], "and replaced")
}
