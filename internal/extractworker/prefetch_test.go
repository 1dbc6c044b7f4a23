//go:build unix

package extractworker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/structq"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prefetchOf returns the request of a prefetch of the field id.
func prefetchOf(path string, id FileID) *Request {
	return &Request{Path: path, File: id, Query: structq.RecordsFuncName + `($q;["id"])`, Vars: []string{structq.Var},
		Values: json.RawMessage(`[{"limit":1}]`), Trusted: true, Slurp: true, Limits: request(path, id, "", 0).Limits}
}

// TestPoolPrefetch: a prefetch runs in an idle worker, which keeps the
// file decoded (the pool sends it the file's calls); it is not run again
// on a worker that has the file, nor while a query holds a place in line,
// nor does it start a worker.
func TestPoolPrefetch(t *testing.T) {
	testenv.Parallel(t)
	p := testPool(t, Config{Workers: 1, MaxWorkers: 2, CacheBytes: 1 << 20})
	path, id := jsonlFile(t, 50)
	other, otherID := jsonlFile(t, 60)
	require.False(t, p.Prefetch(prefetchOf(path, id), 5*time.Second, nil), "no worker: none is started for it")
	assert.Empty(t, p.Stats().PIDs)

	_, err := p.Run(context.Background(), request(other, otherID, `.id`, 5*time.Second), 5*time.Second, 1<<20)
	require.NoError(t, err) // a worker runs, idle now
	done := make(chan *Response, 1)
	require.True(t, p.Prefetch(prefetchOf(path, id), 5*time.Second, func(r *Response) { done <- r }))
	resp := <-done
	require.NotNil(t, resp)
	require.Nil(t, resp.Failure)
	assert.True(t, resp.Cached, "the worker keeps the file")
	assert.False(t, p.Prefetch(prefetchOf(path, id), 5*time.Second, nil), "the worker has the file")

	const hold = time.Minute
	held := make(chan error, 1)
	go func() {
		_, err := p.Run(context.Background(), request(other, otherID, classHold, hold), hold, 1<<20)
		held <- err
	}()
	t.Cleanup(func() { endHeld(p) })
	for p.Stats().Busy == 0 {
		time.Sleep(time.Millisecond)
	}
	assert.False(t, p.Prefetch(prefetchOf(other, otherID), 5*time.Second, nil), "a query holds a place")
	assert.Len(t, p.Stats().PIDs, 1, "no worker started for a prefetch")
	endHeld(p)
	require.NoError(t, <-held)
}
