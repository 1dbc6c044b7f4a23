package lro_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sizedRows yields n records of about size bytes each, then waits at
// barrier, if not nil, before it ends: so that every stream of a test holds
// its spool at once, as slow cursors do.
func sizedRows(n, size int, barrier *sync.WaitGroup) iter.Seq2[json.RawMessage, error] {
	body := strings.Repeat("x", max(size-30, 1))
	return func(yield func(json.RawMessage, error) bool) {
		for i := range n {
			if !yield(json.RawMessage(fmt.Sprintf(`{"id":%d,"body":"%s"}`, i, body)), nil) {
				return
			}
		}
		if barrier != nil {
			barrier.Done()
			waitAtMost(barrier, 5*time.Second)
		}
	}
}

// waitAtMost waits for wg, or for d.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// streamConcurrently runs calls streamed results of n records of size bytes
// at once through the middleware and returns their results, failing the
// test if they are not all back within limit: a call that waits for room
// forever hangs here.
func streamConcurrently(t *testing.T, o *lro.Offloader, calls, n, size int, limit time.Duration) []*mcp.CallToolResult {
	t.Helper()
	var barrier sync.WaitGroup
	barrier.Add(calls)
	handler := streamHandler(o, func() iter.Seq2[json.RawMessage, error] { return sizedRows(n, size, &barrier) })
	outs := make([]*mcp.CallToolResult, calls)
	var (
		wg   sync.WaitGroup
		back atomic.Int64
	)
	for i := range calls {
		wg.Go(func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = "rows"
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			out, err := handler(ctx, req)
			assert.NoError(t, err)
			outs[i] = out
			back.Add(1)
		})
	}
	waitAtMost(&wg, limit+20*time.Second)
	if back.Load() != int64(calls) {
		t.Fatalf("%d of %d concurrent streamed calls never returned: the quota deadlocked", int64(calls)-back.Load(), calls)
	}
	return outs
}

// streamHandler returns o's middleware around a tool that streams the
// records of each call with CollectSeq.
func streamHandler(o *lro.Offloader, records func() iter.Seq2[json.RawMessage, error]) server.ToolHandlerFunc {
	return mcpgo.Middleware(o)(func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		recs, offloaded, err := lro.CollectSeq(ctx, records())
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if offloaded {
			return mcp.NewToolResultText("placeholder"), nil
		}
		b, _ := json.Marshal(recs)
		return mcp.NewToolResultText(string(b)), nil
	})
}

// outcomes counts, from the hooks, the results offloaded and those that
// got the fallback, and why.
type outcomes struct {
	mu        sync.Mutex
	offloaded int
	failed    []error
}

func (c *outcomes) hooks() lro.Hooks {
	return lro.Hooks{
		OnOffload: func(lro.OffloadEvent) { c.mu.Lock(); c.offloaded++; c.mu.Unlock() },
		OnWriteFailed: func(e lro.WriteFailedEvent) {
			c.mu.Lock()
			c.failed = append(c.failed, e.Err)
			c.mu.Unlock()
		},
	}
}

// check asserts that no call failed and each was offloaded or got the
// fallback for want, and returns how many were offloaded.
func (c *outcomes) check(t *testing.T, outs []*mcp.CallToolResult, want error) int {
	t.Helper()
	for _, out := range outs {
		require.NotNil(t, out)
		require.False(t, out.IsError, "a full quota is never a failed call")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.Equal(t, len(outs), c.offloaded+len(c.failed), "each call is offloaded or falls back")
	for _, err := range c.failed {
		assert.ErrorIs(t, err, want)
	}
	n := c.offloaded
	c.offloaded, c.failed = 0, nil
	return n
}

// TestQuotaStreamsNeverDeadlock reproduces issue 22.1: each streamed
// result's spool held room while its final file waited for room, so
// enough concurrent streams held the whole quota and waited for each
// other forever. Nothing may wait while it holds room, and a call that
// cannot have room gets the fallback.
func TestQuotaStreamsNeverDeadlock(t *testing.T) {
	t.Run("default quota, 300 small streams", func(t *testing.T) {
		var c outcomes
		o := newOffloader(t, nil, lro.WithFS(lrotest.NewMemFS("/lro")), lro.WithHooks(c.hooks()),
			lro.WithTool("rows", lro.ToolPolicy{Generic: true}), lro.WithoutJanitor())
		outs := streamConcurrently(t, o, 300, 20, 430, 10*time.Second) // 8.6 KB each
		assert.Equal(t, 300, c.check(t, outs, nil), "8.6 KB streams all fit a 1 GiB quota")
		assert.Zero(t, lro.Reserved(o), "every reservation was given back")
	})
	t.Run("20 MiB quota, 10 streams of 4 MB", func(t *testing.T) {
		var c outcomes
		o := newOffloader(t, func(c *lro.Config) { c.MaxDirBytes = 20 << 20 }, lro.WithFS(lrotest.NewMemFS("/lro")),
			lro.WithHooks(c.hooks()), lro.WithTool("rows", lro.ToolPolicy{Generic: true}), lro.WithoutJanitor())
		outs := streamConcurrently(t, o, 10, 4000, 1000, 10*time.Second)
		assert.Positive(t, c.check(t, outs, lro.ErrOverQuota), "some streams fit")
		assert.Zero(t, lro.Reserved(o), "every reservation was given back")
		assert.LessOrEqual(t, lro.Usage(o), int64(20<<20))

		// And the quota still serves: a later offload is not stuck behind
		// anything.
		outs = streamConcurrently(t, o, 1, 4000, 1000, 10*time.Second)
		assert.Equal(t, 1, c.check(t, outs, nil), "a later stream evicts and fits")
	})
}

// TestQuotaWaitEndsWithTheCall: a call that waits for room held by a write
// in progress stops waiting when its context ends, and gets the fallback.
func TestQuotaWaitEndsWithTheCall(t *testing.T) {
	mem := lrotest.NewMemFS("/lro")
	gate := &gateFS{MemFS: mem, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	o := newOffloader(t, func(c *lro.Config) { c.MaxDirBytes = 1 << 20 }, lro.WithFS(gate), lro.WithoutJanitor())
	recs := make([]json.RawMessage, 700) // about 700 KB: two do not fit 1 MiB
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":%d,"body":"%s"}`, i, strings.Repeat("y", 1000)))
	}
	set := lro.ResultSet{Operation: "logs", Generic: true, Records: recs, Validated: true}

	first := make(chan lro.Outcome, 1)
	go func() {
		out, err := o.Offload(context.Background(), set)
		assert.NoError(t, err)
		first <- out
	}()
	<-gate.entered // the first write holds its room and is blocked in Create

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	out, err := o.Offload(ctx, set)
	require.NoError(t, err)
	testenv.Within(t, time.Since(start), 5*time.Second, "the wait ended with the call's context")
	assert.Equal(t, lro.Truncated, out.Action)
	assert.ErrorIs(t, out.Err, lro.ErrOverQuota)
	assert.ErrorIs(t, out.Err, context.DeadlineExceeded)

	close(gate.release)
	assert.Equal(t, lro.Offloaded, (<-first).Action)
	assert.Zero(t, lro.Reserved(o))
}

// gateFS blocks the first Create until release is closed.
type gateFS struct {
	*lrotest.MemFS
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (g *gateFS) Create(name string) (lro.File, error) {
	g.once.Do(func() {
		g.entered <- struct{}{}
		<-g.release
	})
	return g.MemFS.Create(name)
}

// spaceFS is a file system of capacity bytes: DiskSpace tells what its
// files leave free, and a write past the capacity fails with ENOSPC.
type spaceFS struct {
	*meterFS
	capacity int64
	enospc   atomic.Int64 // writes that hit the capacity
}

func (s *spaceFS) DiskSpace() (avail, total int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.capacity - s.now, s.capacity, nil
}

func (s *spaceFS) Create(name string) (lro.File, error) {
	f, err := s.meterFS.Create(name)
	if err != nil {
		return nil, err
	}
	return &spaceFile{File: f, s: s}, nil
}

type spaceFile struct {
	lro.File
	s *spaceFS
}

func (f *spaceFile) Write(p []byte) (int, error) {
	f.s.mu.Lock()
	full := f.s.now+int64(len(p)) > f.s.capacity
	f.s.mu.Unlock()
	if full {
		f.s.enospc.Add(1)
		return 0, &os.PathError{Op: "write", Path: "lro", Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

// TestFreeSpaceReserveUnderConcurrentStreams reproduces issue 22.10: on a
// 64 MiB file system, concurrent streamed results each passed the
// free-space check alone and together wrote it full. The writes in flight
// count, a streamed result's spool and final file both: no write reaches
// the end of the disk, and the reserve stays free.
func TestFreeSpaceReserveUnderConcurrentStreams(t *testing.T) {
	const capacity = 64 << 20
	space := &spaceFS{meterFS: newMeterFS(lrotest.NewMemFS("/lro")), capacity: capacity}
	var c outcomes
	o := newOffloader(t, func(c *lro.Config) { c.MaxDirBytes = -1 }, lro.WithFS(space), lro.WithHooks(c.hooks()),
		lro.WithTool("rows", lro.ToolPolicy{Generic: true}), lro.WithoutJanitor())
	outs := streamConcurrently(t, o, 20, 4000, 1000, 10*time.Second) // 4 MB each, 80 MB in all
	offloaded := c.check(t, outs, lro.ErrLowDiskSpace)
	assert.Positive(t, offloaded)
	assert.Less(t, offloaded, 20, "80 MB cannot all fit 64 MiB")
	assert.Zero(t, space.enospc.Load(), "no write ran into a full disk")
	reserve := int64(capacity / 100 * 5)
	assert.LessOrEqual(t, space.Peak(), int64(capacity)-reserve, "the free-space reserve was kept")
	assert.Zero(t, lro.Reserved(o))
}

// TestOldestStreamWaitsForRoom: two streams whose spools both fit a disk
// that has room for one final file only while both spools are held. Each
// used to fail its final file for want of the room the other held, so
// neither result was offloaded though either fit. The older write waits
// for the other to give its room back; the younger gets the fallback.
func TestOldestStreamWaitsForRoom(t *testing.T) {
	const capacity = 20 << 20 // 4 MB spools fit twice; a 4 MB file beside both does not
	space := &spaceFS{meterFS: newMeterFS(lrotest.NewMemFS("/lro")), capacity: capacity}
	var c outcomes
	o := newOffloader(t, func(c *lro.Config) { c.MaxDirBytes = -1 }, lro.WithFS(space), lro.WithHooks(c.hooks()),
		lro.WithTool("rows", lro.ToolPolicy{Generic: true}), lro.WithoutJanitor())
	outs := streamConcurrently(t, o, 2, 4000, 1000, 10*time.Second) // both spools are full before either file is written
	assert.Equal(t, 1, c.check(t, outs, lro.ErrLowDiskSpace), "the older stream is offloaded")
	assert.Zero(t, space.enospc.Load())
	assert.Zero(t, lro.Reserved(o))
}

// holdFirstFS holds the first Create until release is closed, and then
// fails it: a write in progress that holds its claim, and gives it back.
type holdFirstFS struct {
	*spaceFS
	once             sync.Once
	entered, release chan struct{}
}

func (h *holdFirstFS) Create(name string) (lro.File, error) {
	first := false
	h.once.Do(func() {
		first = true
		h.entered <- struct{}{}
		<-h.release
	})
	if first {
		return nil, errors.New("the first write fails")
	}
	return h.spaceFS.Create(name)
}

// TestWriteWaitsForDiskAWriteInProgressHolds: a result that would fit the
// disk but for what a write in progress may still put on it waits for
// that write, instead of falling back at once; when the write fails and
// gives its claim back, the result is offloaded.
func TestWriteWaitsForDiskAWriteInProgressHolds(t *testing.T) {
	space := &spaceFS{meterFS: newMeterFS(lrotest.NewMemFS("/lro")), capacity: 1300 << 10} // one 700 KB file fits, two do not
	fsys := &holdFirstFS{spaceFS: space, entered: make(chan struct{}, 1), release: make(chan struct{})}
	o := newOffloader(t, func(c *lro.Config) { c.MaxDirBytes = -1 }, lro.WithFS(fsys), lro.WithoutJanitor())
	recs := make([]json.RawMessage, 700)
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":%d,"body":"%s"}`, i, strings.Repeat("y", 1000)))
	}
	set := lro.ResultSet{Operation: "logs", Generic: true, Records: recs, Validated: true}
	offload := func() <-chan lro.Outcome {
		c := make(chan lro.Outcome, 1)
		go func() {
			out, err := o.Offload(context.Background(), set)
			assert.NoError(t, err)
			c <- out
		}()
		return c
	}

	first := offload()
	<-fsys.entered // it holds its claim, blocked in Create
	second := offload()
	select {
	case out := <-second:
		t.Fatalf("the second result came back (%v, %v) while the first write, whose claim it needs, was in progress", out.Action, out.Err)
	case <-time.After(200 * time.Millisecond):
	}
	close(fsys.release)
	assert.Equal(t, lro.Truncated, (<-first).Action)
	out := <-second
	assert.Equal(t, lro.Offloaded, out.Action, "offloaded once the claim was given back: %v", out.Err)
	assert.Zero(t, lro.Reserved(o))
}
