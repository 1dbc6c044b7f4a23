//go:build unix

package extractworker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/internal/jqsandbox"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonlFile writes n records after a header and returns the path and its
// FileID.
func jsonlFile(t testing.TB, n int) (string, FileID) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"type":"lro_header","schema_version":"generic"}` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `{"id":%d,"title":"record %d","tags":["a","b"]}`+"\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "f.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	f, id, err := Open(path)
	require.NoError(t, err)
	f.Close()
	return path, id
}

func request(path string, id FileID, query string, timeout time.Duration) *Request {
	return &Request{Path: path, File: id, Query: query, Limits: jqsandbox.Limits{Timeout: timeout}}
}

// testPools counts the pools of testPool.
var testPools atomic.Int64

// testPool returns a pool of its own (a Config no other test uses), so
// that tests may run in parallel.
func testPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	cfg.CacheBytes += testPools.Add(1) // a pool per test
	p := PoolFor(cfg)
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, w := range slices.Clone(p.procs) {
			if w.cmd != nil && !w.busy {
				p.drop(w)
			}
		}
	})
	return p
}

// endHeld kills p's busy workers from outside: a query held only to keep
// a worker busy has served its test once the test saw what it waited
// for, and need not run to its deadline (its caller is told the worker
// was killed).
func endHeld(p *Pool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.procs {
		if w.cmd != nil && w.busy {
			syscall.Kill(w.pid, syscall.SIGKILL)
		}
	}
}

func values(resp *Response) []string {
	var out []string
	for _, v := range resp.Values {
		out = append(out, string(v))
	}
	return out
}

func TestPoolRunsQueries(t *testing.T) {
	p := testPool(t, Config{Workers: 1, CacheBytes: 1 << 20})
	path, id := jsonlFile(t, 100)
	req := request(path, id, `select(.id < 3) | .title`, 5*time.Second)
	resp, err := p.Run(context.Background(), req, 5*time.Second, 1<<20)
	require.NoError(t, err)
	require.Nil(t, resp.Failure)
	assert.Equal(t, []string{`"record 0"`, `"record 1"`, `"record 2"`}, values(resp))
	assert.True(t, resp.Cached, "a small file stays decoded in the worker")

	req = request(path, id, `length`, 5*time.Second)
	req.Slurp = true
	resp, err = p.Run(context.Background(), req, 5*time.Second, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, []string{"100"}, values(resp))

	req = request(path, id, `select(.id == $n) | .tags`, 5*time.Second)
	req.Vars, req.Values, req.Trusted = []string{"n"}, json.RawMessage(`[7]`), true
	resp, err = p.Run(context.Background(), req, 5*time.Second, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, []string{`["a","b"]`}, values(resp))

	resp, err = p.Run(context.Background(), request(path, id, `error("boom")`, 5*time.Second), 5*time.Second, 1<<20)
	require.NoError(t, err)
	require.NotNil(t, resp.Failure)
	assert.Equal(t, KindQuery, resp.Failure.Kind)
	assert.Equal(t, "query failed on record 1: boom", resp.Failure.Message)

	resp, err = p.Run(context.Background(), request(path, id, `select(`, 5*time.Second), 5*time.Second, 1<<20)
	require.NoError(t, err)
	assert.Contains(t, resp.Failure.Message, "invalid query: parse error")
}

// TestPoolRefusesAnotherFile: the worker opens the file by its path, and
// refuses it unless it is the file the parent checked.
func TestPoolRefusesAnotherFile(t *testing.T) {
	p := testPool(t, Config{Workers: 1})
	path, id := jsonlFile(t, 10)
	other := id
	other.Ino++
	resp, err := p.Run(context.Background(), request(path, other, `.`, 5*time.Second), 5*time.Second, 1<<20)
	require.NoError(t, err)
	require.NotNil(t, resp.Failure)
	assert.Equal(t, KindFile, resp.Failure.Kind)
	assert.Contains(t, resp.Failure.Message, "the file changed")
}

// classHold is one of the queries that keep a builtin busy for
// hours: a 1 KB pattern of 75 distinct 1000-wide classes, each of which
// matches "x", over a 60 MB string; Go's regexp runs 75 threads over
// every byte, in a single call nothing can interrupt.
var classHold = func() string {
	var b strings.Builder
	for i := range 75 {
		fmt.Fprintf(&b, `[\\x{%x}-\\x{%x}]`, i, i+999)
	}
	return `("x" * 60000000) | test("` + b.String() + `y")`
}()

// TestPoolKillsAtTheDeadline: a query stuck in a builtin is stopped with
// its worker soon after its deadline, and the next query gets a fresh
// worker.
func TestPoolKillsAtTheDeadline(t *testing.T) {
	testenv.Parallel(t)
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1})
	path, id := jsonlFile(t, 1)
	_, err := p.Run(context.Background(), request(path, id, `.id`, 5*time.Second), 5*time.Second, 1<<20)
	require.NoError(t, err)
	before := p.Stats().PIDs
	// Three seconds, so that the query is surely in the builtin by then,
	// even on a loaded machine: before, gojq would stop it by itself.
	start := time.Now()
	resp, err := p.Run(context.Background(), request(path, id, classHold, 3*time.Second), 3*time.Second, 1<<20)
	took := time.Since(start)
	require.NoError(t, err)
	require.NotNil(t, resp.Failure)
	require.Len(t, before, 1)
	// Its bound of CPU time, or on a machine so loaded that the worker
	// got less than that, the wall-clock backstop.
	assert.Regexp(t, `^query took longer than (3s and was stopped \(3s of CPU time, its bound\); narrow it|14s and was stopped \(wall-clock time: its worker got only .* of CPU time of the 3s it may use, the machine is busy\); retry later, or narrow it)$`, resp.Failure.Message)
	// Its bound is CPU time, which a worker beside other work (the race
	// detector's, the tests beside it) gathers slower than the clock:
	// in wall-clock time, what holds is the backstop.
	testenv.Within(t, took, WallBound(3*time.Second)+killGrace+time.Second, "stopped by its CPU bound, or the wall-clock backstop at the latest")
	after := p.Stats().PIDs
	assert.NotEqual(t, before, after, "took %v, %+v", took, resp)

	resp, err = p.Run(context.Background(), request(path, id, `.id`, 5*time.Second), 5*time.Second, 1<<20)
	require.NoError(t, err)
	assert.Nil(t, resp.Failure)
}

// TestPoolHardMemoryLimit: a query that the heap watchdog would let grow
// (its MaxHeapBytes is larger than the worker's limit) is stopped by the
// worker's hard limit, and reported as too large.
func TestPoolHardMemoryLimit(t *testing.T) {
	testenv.Parallel(t)
	if !hardLimit {
		t.Skip("no hard memory limit on this platform or in this build")
	}
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1, MemoryBytes: 96 << 20})
	path, id := jsonlFile(t, 1)
	// A deadline no busy machine reaches: the worker runs at nice 5.
	req := request(path, id, `[range(1e8)] | length`, 10*time.Minute)
	req.Limits.MaxHeapBytes = 8 << 30
	resp, err := p.Run(context.Background(), req, 10*time.Minute, 1<<20)
	require.NoError(t, err)
	require.NotNil(t, resp.Failure)
	assert.Equal(t, MemoryFailure(), resp.Failure)
}

// TestPoolHostileQueryCostsOnlyItself: while a query holds one worker
// (here until the test ends it), queries of the same file run on another
// one at once.
func TestPoolHostileQueryCostsOnlyItself(t *testing.T) {
	testenv.Parallel(t)
	p := testPool(t, Config{Workers: 2, CacheBytes: 1 << 20})
	path, id := jsonlFile(t, 50)
	_, err := p.Run(context.Background(), request(path, id, `.id`, 5*time.Second), 5*time.Second, 1<<20)
	require.NoError(t, err)

	// A deadline no busy machine reaches during the ten queries: the query
	// is held throughout, and the test ends it (were the test killed, its
	// worker would end itself a minute later).
	const hold = time.Minute
	type outcome struct {
		resp *Response
		err  error
	}
	held := make(chan outcome, 1)
	go func() {
		resp, err := p.Run(context.Background(), request(path, id, classHold, hold), hold, 1<<20)
		held <- outcome{resp, err}
	}()
	t.Cleanup(func() { endHeld(p) })
	require.Eventually(t, func() bool { return p.Stats().Busy == 1 }, 5*time.Second, time.Millisecond)
	for range 10 {
		start := time.Now()
		resp, err := p.Run(context.Background(), request(path, id, `select(.id == 7) | .title`, 5*time.Second), 5*time.Second, 1<<20)
		require.NoError(t, err)
		require.Nil(t, resp.Failure)
		testenv.Within(t, time.Since(start), time.Second, "a query beside the held one")
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, 1, p.Stats().Busy, "the held query still runs")
	endHeld(p)
	o := <-held
	require.NoError(t, o.err)
	require.NotNil(t, o.resp.Failure, "the held query was stopped")
	assert.NotEqual(t, TimeoutFailure(hold), o.resp.Failure)
}

// TestPoolBusy: when every worker is held, a call waits in line LineWait
// at most, then is told when to retry, with the counts as they are.
// The held query's place is due back at its wall-clock backstop
// (WallBound(3 s) and killGrace: 14.5 s), which the retry hint counts.
func TestPoolBusy(t *testing.T) {
	// Not parallel: it sets LineWait, which every pool reads.
	defer func(d time.Duration) { LineWait = d }(LineWait)
	LineWait = 300 * time.Millisecond
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1})
	path, id := jsonlFile(t, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(admit.WithSession(context.Background(), "holder"), request(path, id, classHold, 3*time.Second), 3*time.Second, 1<<20)
	}()
	require.Eventually(t, func() bool { return p.Stats().Busy == 1 }, 5*time.Second, 10*time.Millisecond)
	_, err := p.Run(context.Background(), request(path, id, `.`, time.Second), time.Second, 1<<20)
	var be *admit.BusyError
	require.ErrorAs(t, err, &be)
	assert.Regexp(t, `^busy: no place of 1 queries came free within 300ms \(1 running, 0 waiting\); retry in (1[0-5]|[1-9]) s$`, be.Error())
	endHeld(p)
	<-done
}

// TestFrames: what writeFrame writes, readFrame reads; a frame over the
// bound is refused before it is read.
func TestFrames(t *testing.T) {
	var buf strings.Builder
	resp := &Response{Truncated: true, Omitted: 3, Failure: &Failure{Kind: KindQuery, Message: "m"}}
	vals := []json.RawMessage{json.RawMessage(`1`), json.RawMessage(`"two"`), json.RawMessage(`{}`)}
	require.NoError(t, writeFrame(&buf, resp, vals))
	var got Response
	blobs, err := readFrame(bufioReader(buf.String()), 1<<20, &got)
	require.NoError(t, err)
	assert.Equal(t, vals, blobs)
	assert.Equal(t, *resp, got)

	buf.Reset()
	req := &Request{Path: "/tmp/\xff.jsonl", Query: "\x88 | .", Vars: []string{"x"}, Values: json.RawMessage(`[1]`)}
	require.NoError(t, writeFrame(&buf, req, req.blobs()))
	back, err := readRequest(bufioReader(buf.String()))
	require.NoError(t, err)
	assert.Equal(t, req, back, "byte for byte, though not UTF-8")

	_, err = readFrame(bufioReader(buf.String()), 10, &got)
	assert.ErrorIs(t, err, errFrameTooLarge)
	_, err = readFrame(bufioReader(buf.String()[:20]), 1<<20, &got)
	assert.Error(t, err)
}

// TestWorkerEndsItselfWithoutItsParent: a worker whose parent is gone (and
// so will not kill it) ends itself soon after its query's deadline, even
// in a builtin that nothing interrupts.
func TestWorkerEndsItselfWithoutItsParent(t *testing.T) {
	if !testenv.Timing() {
		// The worker runs at nice 5: beside a loaded machine it got no
		// CPU to end itself for over two minutes. What it proves is a
		// bound in time.
		t.Skip("a bound in time: LRO_TEST_TIMING=1 runs it (CI does)")
	}
	w, err := startProc("", workerConfig{})
	require.NoError(t, err)
	defer w.close()
	path, id := jsonlFile(t, 1)
	req := request(path, id, classHold, 2*time.Second)
	require.NoError(t, writeFrame(w.stdin, req, req.blobs()))
	start := time.Now()
	select {
	case <-w.exited:
		t.Logf("the worker ended itself %v after the query started", time.Since(start).Round(time.Millisecond))
		assert.Greater(t, time.Since(start), 2*time.Second)
	case <-time.After(WallBound(2*time.Second) + selfKillGrace + 3*time.Second):
		t.Fatal("the worker still runs")
	}
}

// TestPoolGrowsForSlowQueries: when its only worker is held by a slow
// query, the pool starts another for the next call (but not while the
// query held might still be an ordinary one).
func TestPoolGrowsForSlowQueries(t *testing.T) {
	testenv.Parallel(t)
	p := testPool(t, Config{Workers: 1, MaxWorkers: 2})
	path, id := jsonlFile(t, 10)
	_, err := p.Run(context.Background(), request(path, id, `.id`, 5*time.Second), 5*time.Second, 1<<20)
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(context.Background(), request(path, id, classHold, 2*time.Second), 2*time.Second, 1<<20)
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	resp, err := p.Run(context.Background(), request(path, id, `select(.id == 3) | .id`, 5*time.Second), 5*time.Second, 1<<20)
	took := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, []string{"3"}, values(resp))
	assert.GreaterOrEqual(t, took, slowQuery-100*time.Millisecond, "waited for the held query to prove slow")
	testenv.Within(t, took, slowQuery+time.Second, "a call while the pool grows")
	assert.Len(t, p.Stats().PIDs, 2)
	endHeld(p)
	<-done
}

// TestPoolSessionsTakeTurns: when every worker is held, the calls of a
// session wait in its line, however many (issue 40: an agent's parallel
// calls were refused but one), and the worker that comes free goes to the
// session whose turn it is, not to the one that holds the workers.
func TestPoolSessionsTakeTurns(t *testing.T) {
	testenv.Parallel(t)
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1})
	path, id := jsonlFile(t, 1)
	hostile := admit.WithSession(context.Background(), "hostile")
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(hostile, request(path, id, classHold, 2*time.Second), 2*time.Second, 1<<20)
	}()
	require.Eventually(t, func() bool { return p.Stats().Busy == 1 }, time.Minute, 10*time.Millisecond)
	served := make(chan string, 8)
	ask := func(ctx context.Context, who string) {
		go func() {
			resp, err := p.Run(ctx, request(path, id, `.id`, 5*time.Second), 5*time.Second, 1<<20)
			if err != nil || resp.Failure != nil {
				served <- fmt.Sprintf("%s failed: %v %+v", who, err, resp)
				return
			}
			served <- who
		}()
	}
	for range 4 {
		ask(hostile, "hostile")
	}
	require.Eventually(t, func() bool { _, waiting := p.line.Held(); return waiting == 4 }, time.Minute, 10*time.Millisecond, "the session's calls wait, none is refused")
	ask(admit.WithSession(context.Background(), "ordinary"), "ordinary")
	require.Eventually(t, func() bool { _, waiting := p.line.Held(); return waiting == 5 }, time.Minute, 10*time.Millisecond)
	endHeld(p) // the worker comes free
	<-done
	assert.Equal(t, "ordinary", <-served, "the ordinary session is served first")
	for range 4 {
		assert.Equal(t, "hostile", <-served)
	}
}

// TestPoolStartFailure: a worker program that does not start is tried
// twice, then the call fails with ErrUnavailable and the reason; the next
// calls fail at once until retryBroken has passed.
func TestPoolStartFailure(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "starts")
	exe := filepath.Join(dir, "not-a-worker")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\necho started >> "+count+"\necho no such worker >&2\nexit 3\n"), 0o700))
	p := testPool(t, Config{Workers: 1, Executable: exe})
	path, id := jsonlFile(t, 1)
	_, err := p.Run(context.Background(), request(path, id, `.`, time.Second), time.Second, 1<<20)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "no such worker", "says why")
	b, _ := os.ReadFile(count)
	assert.Equal(t, 2, strings.Count(string(b), "started"), "tried twice")

	start := time.Now()
	_, err = p.Run(context.Background(), request(path, id, `.`, time.Second), time.Second, 1<<20)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "no such worker")
	testenv.Within(t, time.Since(start), 100*time.Millisecond, "at once while broken")
	b, _ = os.ReadFile(count)
	assert.Equal(t, 2, strings.Count(string(b), "started"))
}

func TestPoolKeepsWhatASelectOfALargeFileRead(t *testing.T) {
	// A file too large to decode for the cache: a select keeps the
	// titles and where each record is; the next select on the title reads
	// only the records it outputs, from the file, by their offsets (which
	// count from the record after the header).
	var b strings.Builder
	b.WriteString(`{"type":"lro_header","schema_version":"generic"}` + "\n")
	for i := range 1000 {
		fmt.Fprintf(&b, `{"id":%d,"title":"record %d","body":%q}`+"\n", i, i, strings.Repeat("x", 500))
	}
	path := filepath.Join(t.TempDir(), "f.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	f, id, err := Open(path)
	require.NoError(t, err)
	f.Close()
	p := testPool(t, Config{Workers: 1, MaxWorkers: 1, CacheBytes: 400 << 10})
	run := func(query string) *Response {
		t.Helper()
		resp, err := p.Run(context.Background(), request(path, id, query, 5*time.Second), 5*time.Second, 1<<20)
		require.NoError(t, err)
		require.Nil(t, resp.Failure, query)
		return resp
	}
	want := fmt.Sprintf(`{"id":500,"title":"record 500","body":%q}`, strings.Repeat("x", 500))
	first := run(`select(.title == "record 500")`)
	assert.True(t, first.Cached, "kept as it ran")
	assert.Equal(t, []string{want}, values(first))
	second := run(`select(.title == "record 500")`)
	assert.True(t, second.Cached)
	assert.Equal(t, []string{want}, values(second))
	third := run(`select(.title|test("record 99.$"))`)
	assert.True(t, third.Cached)
	require.Len(t, third.Values, 10)
	for i, v := range third.Values {
		assert.Equal(t, fmt.Sprintf(`{"id":%d,"title":"record %d","body":%q}`, 990+i, 990+i, strings.Repeat("x", 500)), string(v))
	}
	// A query that reads another field reads the file again (and keeps
	// what it read in place of the titles).
	opened := values(run(`select(.id == 3)`))
	require.Len(t, opened, 1)
	assert.Contains(t, opened[0], `"title":"record 3"`)
}

// isBusy reports whether err tells the caller to retry: the pool's line
// (one call a session waits) or the pool itself.
func isBusy(err error) bool {
	return errors.As(err, new(*admit.BusyError)) || errors.As(err, new(*BusyError))
}
