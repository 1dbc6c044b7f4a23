package jqsandbox

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Runs are serialized: the heap is shared by the whole process, and the only
// way to attribute its growth to a query is to run one query at a time. The
// slot is released by the evaluating goroutine when it really ends, so a
// builtin stuck past its deadline keeps the slot (and the heap attribution)
// instead of letting work pile up.
var slot = make(chan struct{}, 1)

// active is the state of the run holding slot. The guard functions, which
// gojq calls without any context, read it. It is written only by the holder
// of slot.
var active *runState

const (
	// sampleEvery is the watchdog's heap sampling period. Reading the heap
	// size through runtime/metrics costs about a microsecond and does not
	// stop the world (runtime.ReadMemStats does).
	sampleEvery = 2 * time.Millisecond
	// checkpointEvery is the number of VM instructions between two heap
	// measurements by the evaluating goroutine itself (see vmContext).
	checkpointEvery = 1 << 12
	// gcEvery rate-limits the garbage collections forced to tell live
	// growth from garbage, for processes whose GC lets garbage exceed
	// MaxHeapBytes.
	gcEvery = 100 * time.Millisecond
	// smallAlloc: guards skip the heap check below this estimate.
	smallAlloc = 1 << 20
)

// runState is what the guards, the checkpoints and the watchdog know about
// a run.
type runState struct {
	ctx     context.Context // the run's context, canceled by fail
	cancel  context.CancelCauseFunc
	lim     Limits
	base    uint64 // heap objects bytes when the run started
	hard    uint64 // growth that cannot be garbage, see newRunState
	lastGC  atomic.Int64
	regexes map[[2]string]*regexp.Regexp // distinct (regex, flags) seen
	// newRegexes counts the expressions the run added to regexCache.
	newRegexes int
	// record is the index, in the batch being evaluated, of the record
	// the query is evaluating (see recordIter).
	record int
	// deleteChecked is the last value checked by guardDelete.
	deleteChecked any
	// order is the key order of the run's objects (keys_unsorted, and
	// the results).
	order *keyOrder
}

// newRunState measures the heap at the start of a run. The heap count
// includes garbage, so exceeding MaxHeapBytes only leads to a garbage
// collection that confirms the excess. But the GC pacer lets the heap reach
// about twice the live heap, so growth beyond 2*MaxHeapBytes plus the live
// heap of the process is live, and aborts the run at once.
func newRunState(ctx context.Context, lim Limits, cancel context.CancelCauseFunc) *runState {
	base := heapBytes()
	return &runState{
		ctx:     ctx,
		cancel:  cancel,
		lim:     lim,
		base:    base,
		hard:    2*lim.MaxHeapBytes + min(liveBytes(), base),
		regexes: map[[2]string]*regexp.Regexp{},
	}
}

// fail aborts the run with err, which cannot be caught by try: the guards
// call it before refusing an operation, and the VM checks the context before
// its next instruction.
func (st *runState) fail(err error) error {
	st.cancel(err)
	return err
}

func (st *runState) failMemory(g uint64) {
	st.fail(limitf(ErrMemory, "heap grew by %s (limit %s)", human(float64(g)), human(float64(st.lim.MaxHeapBytes))))
}

// heapBytes returns the bytes of heap objects, live or not yet swept.
func heapBytes() uint64 {
	return readMetric("/memory/classes/heap/objects:bytes")
}

// liveBytes returns the live heap as of the last garbage collection.
func liveBytes() uint64 {
	return readMetric("/gc/heap/live:bytes")
}

func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// growth returns the heap growth since the run started.
func (st *runState) growth() uint64 {
	h := heapBytes()
	return h - min(st.base, h)
}

// collect runs a garbage collection unless one was forced less than gcEvery
// ago, and reports whether it did. Excess growth within gcEvery of a
// collection is not garbage in practice: it aborts the run.
func (st *runState) collect() bool {
	now := time.Now().UnixNano()
	last := st.lastGC.Load()
	if now-last < int64(gcEvery) || !st.lastGC.CompareAndSwap(last, now) {
		return false
	}
	runtime.GC()
	return true
}

// checkpoint aborts the run when its heap growth exceeds MaxHeapBytes. It
// runs on the evaluating goroutine, which cannot allocate meanwhile.
func (st *runState) checkpoint() {
	if st.ctx.Err() != nil {
		return
	}
	limit := st.lim.MaxHeapBytes
	g := st.growth()
	if g > limit && g <= st.hard && st.collect() {
		g = st.growth()
	}
	if g > limit {
		st.failMemory(g)
	}
}

// vmContext is the context given to gojq. gojq calls Done before every VM
// instruction; every checkpointEvery calls, the evaluating goroutine itself
// measures the heap. Unlike the watchdog goroutine, this does not depend on
// the scheduler running another goroutine in time when the CPU is busy.
type vmContext struct {
	context.Context
	st *runState
	n  uint32
}

func (c *vmContext) Done() <-chan struct{} {
	if c.n++; c.n%checkpointEvery == 0 {
		c.st.checkpoint()
	}
	return c.Context.Done()
}

// need refuses an operation about to allocate about n bytes at once when n
// exceeds MaxHeapBytes/8 or would take the heap growth of the run over
// MaxHeapBytes. Neither the checkpoints nor the watchdog can stop a single
// allocation, and Go cannot survive running out of memory, so large one-shot
// allocations are checked before they happen.
func (st *runState) need(n float64, what string) error {
	if n <= smallAlloc {
		return nil
	}
	limit := st.lim.MaxHeapBytes
	if n > st.oneShot() {
		return st.fail(limitf(ErrMemory, "%s would allocate about %s at once (limit %s, MaxHeapBytes/8)", what, human(n), human(st.oneShot())))
	}
	g := st.growth()
	if g+uint64(n) > limit && st.collect() {
		g = st.growth()
	}
	if g+uint64(n) > limit {
		return st.fail(limitf(ErrMemory, "%s would allocate about %s with %s already in use (limit %s)", what, human(n), human(float64(g)), human(float64(limit))))
	}
	return nil
}

// oneShot is the most a single builtin call may allocate at once.
func (st *runState) oneShot() float64 {
	return float64(st.lim.MaxHeapBytes / 8)
}

// watch samples the heap until done is closed, as a backstop for the
// checkpoints (the decoding of the input does not run VM instructions).
// Its confirming collections run in the background, so that the sampling
// goes on while the query keeps allocating.
func (st *runState) watch(done <-chan struct{}) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	limit := st.lim.MaxHeapBytes
	var collected chan struct{} // non-nil while a confirming GC runs
	for {
		select {
		case <-done:
			return
		case <-collected:
			collected = nil
			if g := st.growth(); g > limit {
				st.failMemory(g)
				return
			}
			continue
		case <-t.C:
		}
		switch g := st.growth(); {
		case g > st.hard:
			st.failMemory(g)
			return
		case g > limit && collected == nil:
			c := make(chan struct{})
			collected = c
			go func() {
				runtime.GC()
				close(c)
			}()
		}
	}
}

// settle collects the garbage of a run that grew the heap by more than a
// quarter of its budget, so that the next run starts from an accurate
// baseline (its base and hard threshold are measured on a clean heap).
func (st *runState) settle() {
	if st.growth() > st.lim.MaxHeapBytes/4 {
		runtime.GC()
	}
}

// human formats a byte count.
func human(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}
