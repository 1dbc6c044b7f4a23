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

// TestPoolSkipsStoppedWorker: issue 22. A worker stopped with SIGSTOP made
// ordinary queries wait for their deadline (10.5 s) and be told to narrow
// themselves. A new query is not sent to a stopped worker: it is replaced.
func TestPoolSkipsStoppedWorker(t *testing.T) {
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1})
	path, id := jsonlFile(t, 10)
	_, err := p.Run(context.Background(), request(path, id, `.id`, 2*time.Second), 2*time.Second, 1<<20)
	require.NoError(t, err)
	before := p.Stats().PIDs
	require.Len(t, before, 1)
	require.NoError(t, syscall.Kill(before[0], syscall.SIGSTOP))
	t.Cleanup(func() { syscall.Kill(before[0], syscall.SIGKILL) })
	require.Eventually(t, func() bool { return processStopped(before[0]) }, 5*time.Second, 10*time.Millisecond)

	resp, err := p.Run(context.Background(), request(path, id, `select(.id == 3) | .id`, 2*time.Second), 2*time.Second, 1<<20)
	require.NoError(t, err)
	require.Nil(t, resp.Failure, "%+v", resp.Failure)
	assert.Equal(t, []string{"3"}, values(resp))
	assert.NotContains(t, p.Stats().PIDs, before[0], "the stopped worker is gone")
}

// TestPoolStoppedDuringQuery: a worker stopped while it runs a query is
// killed at the query's deadline, and the caller is told why, not to
// narrow a query that did nothing wrong; the next query runs.
func TestPoolStoppedDuringQuery(t *testing.T) {
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1})
	path, id := jsonlFile(t, 10)
	_, err := p.Run(context.Background(), request(path, id, `.id`, 2*time.Second), 2*time.Second, 1<<20)
	require.NoError(t, err)
	pid := p.Stats().PIDs[0]
	done := make(chan *Response, 1)
	go func() {
		// Long enough to be surely running when it is stopped.
		resp, err := p.Run(context.Background(), request(path, id, `[range(1e8)] | length`, 2*time.Second), 2*time.Second, 1<<20)
		assert.NoError(t, err)
		done <- resp
	}()
	require.Eventually(t, func() bool { return p.Stats().Busy == 1 }, 5*time.Second, 5*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	resp := <-done
	require.NotNil(t, resp.Failure)
	assert.Contains(t, resp.Failure.Message, "suspended from outside (SIGSTOP)")
	assert.NotContains(t, resp.Failure.Message, "narrow")

	resp, err = p.Run(context.Background(), request(path, id, `select(.id == 4) | .id`, 2*time.Second), 2*time.Second, 1<<20)
	require.NoError(t, err)
	require.Nil(t, resp.Failure)
}

// BenchmarkProcessStopped: what looking at a worker's state costs each
// call that is handed an idle worker.
func BenchmarkProcessStopped(b *testing.B) {
	b.ReportAllocs()
	pid := syscall.Getpid()
	for b.Loop() {
		if processStopped(pid) {
			b.Fatal("running, not stopped")
		}
	}
}
