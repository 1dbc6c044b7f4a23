//go:build linux

package extractworker

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoolReplacesStoppedWorker: a worker stopped from outside (SIGSTOP)
// while idle is not handed a query: two ordinary queries sent at once
// answer in well under their 10 s timeout, the stopped worker is killed
// and replaced. Before, both waited for the 10.5 s deadline and were told
// to narrow the query.
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
			start := time.Now()
			resp, err := p.Run(context.Background(), request(path, id, `select(.id == 4) | .id`, 10*time.Second), 10*time.Second, 1<<20)
			took := time.Since(start)
			require.NoError(t, err)
			require.Nil(t, resp.Failure, "%v", resp.Failure)
			assert.Equal(t, []string{"4"}, values(resp))
			assert.Less(t, took, 3*time.Second, "not held until the deadline")
		})
	}
	wg.Wait()
	assert.NotContains(t, p.Stats().PIDs, pids[0], "the stopped worker was replaced")
	assert.Eventually(t, func() bool { return !processExists(pids[0]) }, 2*time.Second, 20*time.Millisecond, "and killed")
}

// TestPoolReplacesWorkerStoppedMidQuery: a worker stopped while it runs a
// query is killed soon, not at the query's deadline, and the query runs
// again on a fresh worker.
func TestPoolReplacesWorkerStoppedMidQuery(t *testing.T) {
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
	resp, err := p.Run(context.Background(), request(path, id, q, 10*time.Second), 10*time.Second, 1<<20)
	took := time.Since(start)
	require.NoError(t, err)
	require.Nil(t, resp.Failure, "%v", resp.Failure)
	assert.Equal(t, []string{strconv.Itoa(n)}, values(resp))
	t.Logf("answered in %v", took)
	assert.Less(t, took, 5*time.Second, "not held until the deadline")
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
	if !hardLimit {
		t.Skip("no hard memory limit in this build")
	}
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1, MemoryBytes: 256 << 20})
	path, id := jsonlFile(t, 1)
	run := func(q string) *Response {
		resp, err := p.Run(context.Background(), request(path, id, q, 10*time.Second), 10*time.Second, 1<<20)
		require.NoError(t, err)
		return resp
	}
	require.Nil(t, run(`.id`).Failure)
	first := p.Stats().PIDs
	require.Nil(t, run(`[range(100000)] | length`).Failure)
	assert.Equal(t, first, p.Stats().PIDs, "a small query leaves its worker")
	resp := run(`[range(3000000)] | length`)
	require.Nil(t, resp.Failure, "%v", resp.Failure)
	assert.Equal(t, []string{"3000000"}, values(resp))
	assert.Eventually(t, func() bool {
		pids := p.Stats().PIDs
		return len(pids) == 1 && pids[0] != first[0]
	}, 5*time.Second, 10*time.Millisecond, "a spent worker is replaced")
	require.Nil(t, run(`.id`).Failure)
}
