//go:build linux

package extractworker

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKilledWorkerIsNotBlamedOnTheQuery: a worker killed from outside
// while it runs a query, with no out-of-memory kill on the system, tells
// its caller so, and to retry, rather than that the query needed too
// much memory (issue 30: "needed too much memory... narrow it").
func TestKilledWorkerIsNotBlamedOnTheQuery(t *testing.T) {
	if _, ok := oomKills(); !ok {
		t.Skip("the kernel does not count out-of-memory kills (/proc/vmstat oom_kill)")
	}
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1})
	path, id := jsonlFile(t, 1)
	_, err := p.Run(context.Background(), request(path, id, `.id`, 10*time.Second), 10*time.Second, 1<<20)
	require.NoError(t, err)
	pids := p.Stats().PIDs
	require.Len(t, pids, 1)
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		// Once the query runs: the worker is busy.
		for p.Stats().Busy == 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		syscall.Kill(pids[0], syscall.SIGKILL)
	}()
	resp, err := p.Run(context.Background(), request(path, id, `reduce range(1e9) as $i (0; . + 1)`, 10*time.Second), 10*time.Second, 1<<20)
	<-killed
	require.NoError(t, err)
	require.NotNil(t, resp.Failure)
	assert.NotEqual(t, MemoryFailure(), resp.Failure)
	assert.Equal(t, KindInternal, resp.Failure.Kind)
	assert.Contains(t, resp.Failure.Message, "killed from outside (signal: killed)")
	assert.Contains(t, resp.Failure.Message, "retry it")
}
