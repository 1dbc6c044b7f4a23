package extractworker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcplro/lro/internal/admit"
)

// Config configures a Pool.
type Config struct {
	// Workers is how many workers are kept warm; under load the pool grows
	// to MaxWorkers. Defaults 2 and twice Workers.
	Workers, MaxWorkers int
	// MemoryBytes is what each worker may map beyond its footprint at
	// start: a hard limit on Linux, a target for Go's collector elsewhere.
	// 0 means no limit.
	MemoryBytes uint64
	// CacheBytes is each worker's FileCache budget, in file bytes.
	CacheBytes int64
	// Executable is the program a worker runs: one that links this
	// package and whose main calls nothing before this package's init
	// takes over (cmd/lro-worker). Empty: this very executable, run again
	// (see the package doc).
	Executable string
	// Fallbacks are the programs to run instead, in order, once
	// Executable (or the fallback before) answers with another protocol
	// version: a stale build of cmd/lro-worker found on PATH. "" is this
	// executable, run again.
	Fallbacks []string
}

// poolKey is a Config as a map key.
type poolKey struct {
	workers, maxWorkers int
	memoryBytes         uint64
	cacheBytes          int64
	programs            string // Executable and Fallbacks, joined by NUL
}

func (c Config) key() poolKey {
	return poolKey{c.Workers, c.MaxWorkers, c.MemoryBytes, c.CacheBytes, strings.Join(c.programs(), "\x00")}
}

// programs returns the programs a worker may run, in order of preference.
func (c Config) programs() []string { return append([]string{c.Executable}, c.Fallbacks...) }

// FootprintBytes is what a worker holds at start, before any query: its
// runtime, its code's pages and a heap warmed to 16 MiB (25 MiB resident
// measured on Linux/amd64), rounded up. A budget of memory for workers
// counts, for each one, FootprintBytes plus Config.MemoryBytes.
const FootprintBytes = 32 << 20

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.MaxWorkers < c.Workers {
		c.MaxWorkers = 2 * c.Workers
	}
	return c
}

// Timing of the pool.
const (
	// idleExtra and idleWarm are how long a worker beyond Workers, and
	// one of the warm ones, may stay idle before it is stopped.
	idleExtra = 30 * time.Second
	idleWarm  = 5 * time.Minute
	// retryBroken is how long a pool whose workers cannot start (twice
	// in a row) is left alone before it tries again; calls meanwhile
	// fail with ErrUnavailable at once.
	retryBroken = 5 * time.Second
	// spentCheck: after a query this long (or one that failed), the
	// worker's mapped memory is checked (see proc.spent); a shorter one
	// cannot have mapped much.
	spentCheck = 20 * time.Millisecond
	// slowQuery: a query running this long is not an ordinary one; the
	// pool grows only when every worker holds such a query.
	slowQuery = 250 * time.Millisecond
)

// Errors of Pool.Run.
var (
	// ErrUnavailable: no worker process could be started (the executable
	// cannot be run again, or does not answer as a worker), twice in a
	// row. The error returned wraps it with the cause. The query has not
	// run anywhere.
	ErrUnavailable = errors.New("extractworker: worker processes are unavailable")
)

// BusyError is returned when a call that holds its place in line got no
// worker within LineWait (its workers were replaced, or their start
// failed meanwhile).
type BusyError struct {
	// RetryAfter is when the earliest running query reaches its deadline.
	RetryAfter time.Duration
	// Waited is how long the call waited for a worker.
	Waited time.Duration
	// Running counts the workers running a query, Starting those
	// starting, and Waiting the other calls waiting for one.
	Running, Starting, Waiting int
}

// Error says what the workers do and how long to wait, for the model.
func (e *BusyError) Error() string {
	return fmt.Sprintf("busy: no worker came free within %v (%d running a query, %d starting, %d other calls waiting for one); retry in %d s",
		e.Waited.Round(time.Second), e.Running, e.Starting, e.Waiting, retrySeconds(e.RetryAfter))
}

// A Pool runs requests in worker processes: copies of this executable
// that each answer one request at a time. A worker has a memory limit
// (Config.MemoryBytes) and is killed when a query overruns its deadline,
// so that no query can take more than its worker; a dead worker is
// replaced, and its caller told why its query stopped.
//
// A call first takes a place in the pool's line (LineWait, see
// internal/admit): at most MaxWorkers calls hold one; the others wait in
// their session's line, and the sessions take turns, so that sessions
// looping on slow queries cannot keep the workers from others.
//
// A call that holds a place goes to a free worker that has its file
// decoded, else to any free worker. When none is free (each runs a query
// of a call that is leaving, or is starting), it waits for one, and the
// pool starts another worker (up to MaxWorkers) only once every worker
// has held its query for slowQuery: ordinary queries end sooner than a
// new worker starts and decodes the file, and a flood of them must not
// start processes. A call waits for a worker starting however long its
// start takes (helloWait bounds only a program that hangs); it fails
// with a *BusyError only when no worker came to it within LineWait.
//
// A Pool is safe for concurrent use.
type Pool struct {
	cfg  Config
	line *admit.Admission // the queries' places, fair between sessions

	mu      sync.Mutex
	procs   []*proc
	waiting []*waiter
	broken  time.Time // when starting a worker last failed
	program int       // the program workers run: cfg.programs()[program]
	lastErr error     // why
	reaping bool      // the reaper goroutine runs
}

type waiter struct {
	key string
	ch  chan *proc // buffered: receives the worker handed over, or nil (see failed)
}

var (
	poolsMu sync.Mutex
	pools   = map[poolKey]*Pool{}
)

// PoolFor returns the process's pool for cfg, made on first use. Workers
// are processes: a process keeps one pool per configuration rather than
// one per caller.
func PoolFor(cfg Config) *Pool {
	cfg = cfg.withDefaults()
	poolsMu.Lock()
	defer poolsMu.Unlock()
	p, ok := pools[cfg.key()]
	if !ok {
		p = &Pool{cfg: cfg, line: admit.New("queries")}
		pools[cfg.key()] = p
	}
	return p
}

// Supported reports whether this platform runs workers at all.
func Supported() bool { return supported }

// Run answers req in a worker. The worker opens req.Path itself; key
// identifies the file's content (FileID.Key). timeout bounds the query:
// its worker is killed soon after. maxResponse bounds the results' bytes.
//
// Run returns a Response, with a Failure when the query failed or was
// stopped; or ErrUnavailable, a *BusyError or the context's error. When
// ctx ends first, the query still runs to its end (or deadline) in its
// worker, so that the worker keeps its cache.
func (p *Pool) Run(ctx context.Context, req *Request, timeout time.Duration, maxResponse int) (*Response, error) {
	if !supported {
		return nil, ErrUnavailable
	}
	place, err := p.enter(ctx, timeout)
	if err != nil {
		return nil, err
	}
	key := req.File.Key()
	w, err := p.acquire(ctx, key, timeout)
	if err != nil {
		place.Leave()
		return nil, err
	}
	type outcome struct {
		resp *Response
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		resp, err := w.exchange(req, timeout, maxResponse)
		p.release(w, key, resp)
		place.Leave() // when the worker is free, whether its caller waited or not
		done <- outcome{resp, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			// The worker was gone before it saw the request: try a
			// fresh one, once.
			return p.retry(ctx, req, timeout, maxResponse)
		}
		return o.resp, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// LineWait bounds how long a query waits in the pool's line for a place
// (MaxWorkers places, see [admit]), then for a worker, before it is told
// to retry.
var LineWait = admit.Wait

// enter takes a place in the pool's line for a query of the session ctx
// names (see admit.WithSession) that may use timeout of CPU time: at most
// MaxWorkers queries hold one, and the sessions waiting take turns, so
// that callers looping on queries that run to their deadline cannot keep
// the workers from others. The last place is kept for a session asking
// one query at a time (admit.Request.Spare), which is not refused before
// a place is due back: a place is held up to the query's wall-clock
// backstop (WallBound), which a machine busy enough reaches, and
// LineWait is shorter (issue 40). A session's calls waiting before the
// line (admit.WithBacklog) count as its own for that last place.
func (p *Pool) enter(ctx context.Context, timeout time.Duration) (*admit.Ticket, error) {
	return p.line.Enter(ctx, admit.Request{Session: admit.SessionOf(ctx), Limit: p.cfg.MaxWorkers, Wait: LineWait, Hold: WallBound(timeout) + killGrace, Spare: true, Backlog: admit.BacklogOf(ctx)})
}

// retry runs req once more after its worker turned out to be dead.
func (p *Pool) retry(ctx context.Context, req *Request, timeout time.Duration, maxResponse int) (*Response, error) {
	place, err := p.enter(ctx, timeout)
	if err != nil {
		return nil, err
	}
	defer place.Leave()
	w, err := p.acquire(ctx, req.File.Key(), timeout)
	if err != nil {
		return nil, err
	}
	resp, err := w.exchange(req, timeout, maxResponse)
	p.release(w, req.File.Key(), resp)
	if err != nil {
		return nil, ErrUnavailable
	}
	return resp, nil
}

// acquire hands the caller, which holds a place in line, a worker for a
// query of the file key that may run for timeout: a free one, else a new
// one if the pool may grow, else the first to come free or to start.
// Since the places are as many as the workers may be, one comes soon; the
// wait is bounded by LineWait, and by the start of a worker starting.
func (p *Pool) acquire(ctx context.Context, key string, timeout time.Duration) (*proc, error) {
	since := time.Now()
	giveUp := since.Add(LineWait)
	pos := -1 // where the call stood in line, to keep its place
	p.mu.Lock()
	for {
		if w := p.idleFor(key); w != nil {
			p.take(w, timeout)
			p.mu.Unlock()
			return w, nil
		}
		if p.mayGrow() {
			return p.grow(timeout) // unlocks
		}
		if len(p.procs) == 0 {
			err := p.unavailable()
			p.mu.Unlock()
			return nil, err
		}
		wt := &waiter{key: key, ch: make(chan *proc, 1)}
		at := len(p.waiting)
		if pos >= 0 {
			at = min(pos, at)
		}
		p.waiting = slices.Insert(p.waiting, at, wt)
		wake := later(giveUp, p.startedBy())
		if at := p.slowAt(); at.After(time.Now()) && at.Before(wake) {
			wake = at // the pool may grow then
		}
		p.mu.Unlock()

		t := time.NewTimer(time.Until(wake))
		var err error
		select {
		case w := <-wt.ch:
			t.Stop()
			p.mu.Lock()
			if w == nil {
				continue // a worker failed to start: look again
			}
			p.take(w, timeout)
			p.mu.Unlock()
			return w, nil
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			err = context.Cause(ctx)
		}
		p.mu.Lock()
		i := slices.Index(p.waiting, wt)
		if i < 0 {
			// A worker was handed over just as we woke: use it.
			w := <-wt.ch
			if w == nil {
				continue
			}
			p.take(w, timeout)
			p.mu.Unlock()
			return w, nil
		}
		p.waiting = slices.Delete(p.waiting, i, i+1)
		pos = i
		// A worker still starting is not taken: the call waits for it up
		// to the start's own bound, however long a loaded machine takes.
		if err == nil && !time.Now().Before(later(giveUp, p.startedBy())) {
			err = p.busy(time.Since(since))
		}
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
	}
}

// mayGrow reports whether a call that finds no free worker may start one:
// while fewer than Workers run, or, up to MaxWorkers, when every worker
// is held by a slow query (one running for slowQuery already). Workers
// busy with ordinary queries come free sooner than a new one starts and
// decodes its file; p.mu is held.
func (p *Pool) mayGrow() bool {
	if time.Since(p.broken) <= retryBroken {
		return false
	}
	if len(p.procs) < p.cfg.Workers {
		return true
	}
	return len(p.procs) < p.cfg.MaxWorkers && !time.Now().Before(p.slowAt())
}

// slowAt returns when every busy worker will be running a slow query (the
// zero time when there is none); p.mu is held. A worker still starting
// counts as one that comes free when its start ends at the latest (two
// tries of helloWait): the call it will be handed to should wait for it.
func (p *Pool) slowAt() time.Time {
	at := p.startedBy()
	for _, w := range p.procs {
		if w.cmd != nil && w.busy {
			at = later(at, w.started.Add(slowQuery))
		}
	}
	return at
}

// startedBy returns when the workers still starting will have started or
// failed at the latest (two tries of helloWait), the zero time when none
// is starting; p.mu is held.
func (p *Pool) startedBy() time.Time {
	var at time.Time
	for _, w := range p.procs {
		if w.cmd == nil {
			at = later(at, w.started.Add(2*helloWait))
		}
	}
	return at
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// grow starts a worker for the caller. Its slot is reserved by a
// placeholder counted in procs while it starts, so that concurrent
// callers do not all start one; p.mu is held, and unlocked on return.
func (p *Pool) grow(timeout time.Duration) (*proc, error) {
	slot := &proc{busy: true, started: time.Now()}
	p.procs = append(p.procs, slot)
	p.mu.Unlock()
	w, err := p.start()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.procs = slices.DeleteFunc(p.procs, func(x *proc) bool { return x == slot })
	if err != nil {
		p.failed(err)
		return nil, p.unavailable()
	}
	p.lastErr = nil
	p.procs = append(p.procs, w)
	p.take(w, timeout)
	p.startReaper()
	go p.warm()
	return w, nil
}

// start starts a worker, and tries once more if that fails: a start may
// fail for a passing reason (a machine so loaded that the worker misses
// helloWait, a process limit reached for a moment).
// A program that speaks another protocol is given up for the next of
// Config.Fallbacks, for good, without counting as a try.
func (p *Pool) start() (*proc, error) {
	cfg := workerConfig{MemoryBytes: p.cfg.MemoryBytes, CacheBytes: p.cfg.CacheBytes}
	var err error
	for tries := 0; tries < 2; {
		exe, n := p.programNow()
		var w *proc
		if w, err = startProc(exe, cfg); err == nil {
			return w, nil
		}
		if !errors.Is(err, errProtocol) || !p.nextProgram(n) {
			tries++
		}
	}
	return nil, err
}

// programNow returns the program workers run and its index.
func (p *Pool) programNow() (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.programs()[p.program], p.program
}

// nextProgram gives up the program of index n for the next one, and
// reports whether there is another to try (the next, or one another call
// moved to meanwhile).
func (p *Pool) nextProgram(n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.program == n && n+1 < len(p.cfg.programs()) {
		p.program++
	}
	return p.program != n
}

// failed records that a worker could not start, and wakes the calls
// waiting for one: they look again, and fail if no worker runs; p.mu is
// held.
func (p *Pool) failed(err error) {
	p.broken, p.lastErr = time.Now(), err
	for _, wt := range p.waiting {
		wt.ch <- nil
	}
	p.waiting = nil
}

// unavailable returns ErrUnavailable with the last failure to start a
// worker; p.mu is held.
func (p *Pool) unavailable() error {
	if p.lastErr == nil {
		return ErrUnavailable
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, strings.TrimPrefix(p.lastErr.Error(), "extractworker: "))
}

// idleFor returns a free live worker, preferably one that has the file
// key decoded; p.mu is held. A worker found dead or stopped (SIGSTOP) is
// dropped: it would hold the query until its deadline.
func (p *Pool) idleFor(key string) *proc {
	for {
		var any, best *proc
		for _, w := range slices.Clone(p.procs) {
			if w.busy || w.cmd == nil {
				continue
			}
			if !w.alive() {
				p.drop(w) // died while idle: killed from outside
				continue
			}
			if best == nil && slices.Contains(w.files, key) {
				best = w
			}
			if any == nil {
				any = w
			}
		}
		if best == nil {
			best = any
		}
		if best == nil || !best.stopped() {
			return best
		}
		p.drop(best)
		go p.warm()
	}
}

// take marks w as running a query until its deadline; p.mu is held.
func (p *Pool) take(w *proc, timeout time.Duration) {
	w.busy = true
	w.started = time.Now()
	w.deadline = w.started.Add(timeout + killGrace)
}

// busy returns the BusyError of a call that waited for a worker, and
// left the line of those waiting; p.mu is held.
func (p *Pool) busy(waited time.Duration) *BusyError {
	e := &BusyError{Waited: waited, Waiting: len(p.waiting), RetryAfter: time.Second}
	first := time.Time{}
	for _, w := range p.procs {
		if w.cmd == nil {
			e.Starting++
		} else if w.busy {
			e.Running++
			if first.IsZero() || w.deadline.Before(first) {
				first = w.deadline
			}
		}
	}
	if !first.IsZero() {
		e.RetryAfter = time.Until(first)
	}
	return e
}

// release takes w back after a query of the file key, whose response
// (nil when the worker was gone) says whether the worker has it decoded.
func (p *Pool) release(w *proc, key string, resp *Response) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !w.alive() || resp == nil || resp.Retire || (time.Since(w.started) >= spentCheck || resp.Failure != nil) && w.spent() {
		p.drop(w)
		go p.warm()
		return
	}
	if resp.Cached {
		w.files = slices.DeleteFunc(w.files, func(k string) bool { return k == key })
		w.files = append(w.files, key)
		if len(w.files) > maxRememberedFiles {
			w.files = w.files[1:]
		}
	}
	p.handOver(w)
}

// handOver gives w to the first waiting call, or marks it idle; p.mu is
// held. Waiting calls are served in order; a worker that has the file of
// a later one decoded does not jump the line, so that nobody waits twice.
func (p *Pool) handOver(w *proc) {
	if len(p.waiting) > 0 {
		wt := p.waiting[0]
		p.waiting = p.waiting[1:]
		wt.ch <- w
		return
	}
	w.busy = false
	w.idle = time.Now()
}

// drop removes a dead or retired worker; p.mu is held.
func (p *Pool) drop(w *proc) {
	p.procs = slices.DeleteFunc(p.procs, func(x *proc) bool { return x == w })
	w.close()
}

// Prestart starts Workers workers in the background, unless they run
// already or failed to start within a minute: the first query then finds
// one ready, instead of waiting for a process to start.
func (p *Pool) Prestart() {
	if !supported {
		return
	}
	p.mu.Lock()
	need := len(p.procs) < p.cfg.Workers && time.Since(p.broken) > retryBroken
	p.mu.Unlock()
	if need {
		go p.warm()
	}
}

// warm starts workers until Workers of them run, and hands each to a
// waiting call or leaves it idle, so that the next calls find one ready.
func (p *Pool) warm() {
	for {
		p.mu.Lock()
		if len(p.procs) >= p.cfg.Workers || time.Since(p.broken) <= retryBroken {
			p.mu.Unlock()
			return
		}
		slot := &proc{busy: true, started: time.Now()}
		p.procs = append(p.procs, slot)
		p.mu.Unlock()
		w, err := p.start()
		p.mu.Lock()
		p.procs = slices.DeleteFunc(p.procs, func(x *proc) bool { return x == slot })
		if err != nil {
			p.failed(err)
			p.mu.Unlock()
			return
		}
		p.procs = append(p.procs, w)
		w.busy = true
		p.handOver(w)
		p.startReaper()
		p.mu.Unlock()
	}
}

// startReaper starts the goroutine that stops idle and dead workers, if
// it is not running; p.mu is held.
func (p *Pool) startReaper() {
	if p.reaping {
		return
	}
	p.reaping = true
	go p.reap()
}

// reap stops workers idle for too long, and forgets dead idle ones, until
// no worker is left.
func (p *Pool) reap() {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for range t.C {
		p.mu.Lock()
		n := len(p.procs)
		for _, w := range slices.Clone(p.procs) {
			if w.busy || w.cmd == nil {
				continue
			}
			idle := time.Since(w.idle)
			if !w.alive() || idle > idleWarm || (n > p.cfg.Workers && idle > idleExtra) {
				p.drop(w)
				n--
			}
		}
		if len(p.procs) == 0 {
			p.reaping = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}

// Stats describes a pool, for tests and diagnostics.
type Stats struct {
	// PIDs are the process ids of its workers.
	PIDs []int
	// Busy counts the workers running a query.
	Busy int
	// Waiting counts the calls waiting for a worker.
	Waiting int
}

// Stats returns the pool's current state.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{Waiting: len(p.waiting)}
	for _, w := range p.procs {
		if w.cmd == nil {
			continue
		}
		s.PIDs = append(s.PIDs, w.pid)
		if w.busy {
			s.Busy++
		}
	}
	return s
}
