package jqsandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/jsonvalue"
)

// Mode selects how the records are given to the query.
type Mode int

const (
	// Stream runs the query once per record, like `jq FILTER file.jsonl`.
	Stream Mode = iota
	// Slurp runs the query once on the array of all records, like
	// `jq -s FILTER file.jsonl`.
	Slurp
)

// String returns "stream" or "slurp".
func (m Mode) String() string {
	switch m {
	case Stream:
		return "stream"
	case Slurp:
		return "slurp"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Result holds the results of a run, in order.
type Result struct {
	// Values holds each result compactly encoded as jq 1.6's -c prints it
	// (gojq's encoding of numbers and strings, object keys in the order
	// of the input and the query, see keyOrder); raw strings such as @tsv
	// output are JSON strings.
	Values []json.RawMessage
	// Truncated reports that MaxOutputs or MaxOutputBytes was reached;
	// Values holds the results that fit, in order.
	Truncated bool
	// Omitted counts the results produced but not kept. Once the output
	// is full, the run goes on to the end of the records only to count
	// them (without encoding, and without decoding whole the records a
	// select outputs; for a query with one result per record, or a
	// select comparing a field with a string, from the lines, decoding
	// and evaluating only the records the look cannot tell, see
	// skimmer), so that the count is exact and the same every run,
	// unless Uncounted. With Limits.KnownResults the run stops instead.
	Omitted int
	// Uncounted reports that the count of omitted results did not reach
	// the end of the records: the deadline, the memory budget or a
	// runtime error stopped it. Omitted is then what was counted before,
	// a figure that depends on time: a caller must not state it.
	Uncounted bool
	// Elements, when the last value is an array result that did not fit
	// MaxOutputBytes, cut to the elements that did (a slurped file
	// sorted: the model is shown the first few), is that array's length;
	// else 0. The array counts as one result kept, not omitted.
	Elements int
	// skimmed is how many of Omitted were counted without running the
	// query (see skimmer).
	skimmed int
}

// abandonAfter is how long Run waits for a canceled evaluation to stop
// before returning anyway (a builtin may be busy in native code, which
// the context cannot interrupt; the guards keep that short). A variable
// so that the test of a stuck evaluation need not wait a second twice.
var abandonAfter = time.Second

// Run evaluates the query over the JSONL records read from r (the lines
// after the header). vars holds the values of the variables named at
// Compile, in order; they are converted to plain JSON values.
//
// In Stream mode a runtime error stops the run (jq 1.6 would report it and
// go on with the next record, exiting with status 5): Run returns a
// *QueryError whose Record is the input line, with the results produced
// before it. halt stops the run cleanly. halt_error returns a *HaltError
// with the results produced before it. Errors wrapping ErrTimeout,
// ErrMemory, ErrTooComplex, ErrInputTooLarge or ErrInvalidInput also come
// with the results produced before them.
//
// Runs are serialized process-wide: Run first waits (up to the run's
// timeout plus a second) for the previous run to end, else returns ErrBusy.
// The heap budget is measured on the whole process, so allocations made by
// other goroutines while a query runs count against it.
func (q *Query) Run(ctx context.Context, r io.Reader, mode Mode, vars []any, lim Limits) (Result, error) {
	if r == nil {
		r = strings.NewReader("")
	}
	lim = lim.withDefaults()
	p, lazy := q.readProjection(mode)
	return q.run(ctx, readerSource(r, lim, mode, p, lazy), mode, vars, lim)
}

// readProjection returns what to decode of each record read from a file
// in mode, and whether the lines are kept for the records output (a
// select, a sort).
func (q *Query) readProjection(mode Mode) (Projection, bool) {
	switch {
	case mode == Stream && !q.selectProj.Whole():
		return q.selectProj, true
	case mode == Slurp && !q.sortProj.Whole():
		return q.sortProj, true
	}
	return q.Projection(mode), false
}

// RunKeeping is Run that also returns the records it decoded, as
// RunRecords takes them (their projection covers the query's
// CacheProjection), when it read every record of r and they take at most
// keep bytes (see Records.Bytes); else nil. A cache gets, at no cost, the
// records of a file too large to decode for it beforehand: the query
// keeps what it reads (two fields of a large memory), and stops at a full
// output without decoding the rest.
//
// file, when not nil, holds the bytes r reads, at their offsets from its
// first: the records then keep where their lines are rather than the
// lines (see Records.At), and a sort reads there the lines of the
// records it shows, rather than keeping every line of a large file.
func (q *Query) RunKeeping(ctx context.Context, r io.Reader, mode Mode, vars []any, lim Limits, keep int64, file io.ReaderAt) (Result, *Records, error) {
	if r == nil {
		r = strings.NewReader("")
	}
	lim = lim.withDefaults()
	p, lazy := q.readProjection(mode)
	src := readerSource(r, lim, mode, p, lazy)
	var rs *records
	switch s := src.(type) {
	case *prefetcher:
		rs = s.recs
	case *records:
		rs = s
	}
	if keep > 0 {
		kept := &Records{values: []any{}, proj: q.CacheProjection(mode)}
		if rs.proj != nil {
			kept.values, kept.cols = nil, newColumns(rs.proj)
		}
		rs.keep = &keeper{max: keep, recs: kept, offsets: file != nil}
	}
	rs.file = file
	res, err := q.run(ctx, src, mode, vars, lim)
	if errors.Is(err, ErrStuck) {
		return res, nil, err // the run may still read the records
	}
	return res, rs.keep.records(rs), err
}

// RunRecords is Run over records already decoded (see DecodeRecords), for
// callers that query the same file again and again: decoding is most of
// the cost of a query. The records are only read, never modified. Their
// projection must cover the query's in mode (see Query.Projection), or
// its CacheProjection.
func (q *Query) RunRecords(ctx context.Context, recs *Records, mode Mode, vars []any, lim Limits) (Result, error) {
	if recs == nil {
		recs = &Records{} // no records
	}
	src := &sliceSource{records: recs.values, cols: recs.cols, orders: recs.orders}
	if !recs.proj.Covers(q.Projection(mode)) {
		// A select decodes its outputs whole from their lines.
		if want := q.CacheProjection(mode); !want.lines || !recs.proj.Covers(want) {
			return Result{}, fmt.Errorf("jqsandbox: the records were decoded with %v, which does not cover the query's %v", recs.proj, want)
		}
		src.lines, src.ends, src.offs, src.file = recs.lines, recs.ends, recs.offs, recs.file
	}
	return q.run(ctx, src, mode, vars, lim.withDefaults())
}

// run binds the variables, waits for the run slot and evaluates.
func (q *Query) run(ctx context.Context, src source, mode Mode, vars []any, lim Limits) (Result, error) {
	values, err := q.bind(mode, vars)
	if err != nil {
		return Result{}, err
	}
	if err := acquire(ctx, lim.Timeout+abandonAfter); err != nil {
		return Result{}, err
	}
	return q.wait(q.start(ctx, src, mode, values, lim))
}

// wait returns the result of a started evaluation, giving it a moment to
// stop after its context ends.
func (q *Query) wait(e *evaluation, done chan struct{}) (Result, error) {
	select {
	case <-done:
	case <-e.st.ctx.Done():
		// Give the evaluation a moment to notice, then return anyway.
		t := time.NewTimer(abandonAfter)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	return e.result()
}

// bind checks the mode and converts the variable values.
func (q *Query) bind(mode Mode, vars []any) ([]any, error) {
	if mode != Stream && mode != Slurp {
		return nil, fmt.Errorf("jqsandbox: invalid mode %v", mode)
	}
	if len(vars) != len(q.varNames) {
		return nil, queryErrorf("expected %d variable values for %v, got %d", len(q.varNames), q.varNames, len(vars))
	}
	values := make([]any, len(vars))
	for i, v := range vars {
		x, err := normalize(v)
		if err != nil {
			return nil, queryErrorf("variable $%s: %v", q.varNames[i], err)
		}
		values[i] = x
	}
	return values, nil
}

// start runs the evaluation in a goroutine that owns the run slot (taken by
// the caller) and releases it when the evaluation really ends; done is
// closed when the results are final.
func (q *Query) start(ctx context.Context, src source, mode Mode, vars []any, lim Limits) (e *evaluation, done chan struct{}) {
	ctx, stop := context.WithTimeoutCause(ctx, lim.Timeout, limitf(ErrTimeout, "exceeded %v", lim.Timeout))
	ctx, cancel := context.WithCancelCause(ctx)
	st := newRunState(ctx, lim, cancel)
	st.order = newKeyOrder(src.keyOrders(), q.objects)
	active = st
	e = &evaluation{q: q, st: st, vm: &vmContext{Context: ctx, st: st}, vars: vars, res: Result{Values: []json.RawMessage{}}}
	if mode == Stream {
		e.skim = q.skimmer(vars)
	}
	e.enc.order = st.order
	done = make(chan struct{})
	go func() {
		watching := make(chan struct{})
		go st.watch(watching)
		defer func() {
			if p := recover(); p != nil {
				e.setErr(fmt.Errorf("jqsandbox: internal error: %v", p))
			}
			close(watching)
			active = nil
			cancel(nil)
			stop()
			e.finish()
			close(done)
			st.settle()
			<-slot
		}()
		e.run(src, mode)
	}()
	return e, done
}

// acquire takes the run slot, waiting at most wait.
func acquire(ctx context.Context, wait time.Duration) error {
	select {
	case slot <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case slot <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return ErrBusy
	}
}

// evaluation is the state of one run, shared between the evaluating
// goroutine and Run (which may return before the evaluation stops).
type evaluation struct {
	q    *Query
	st   *runState
	vm   *vmContext
	vars []any

	enc encoder // of the results; used by the evaluating goroutine only
	// skim counts results without running the query once the output is
	// full, when the query has one (see skimmer).
	skim skimmer
	// sorted, when set, are the records of a lazy sort, whose array
	// result is replaced by the records decoded whole (see addRecords).
	sorted *sortedRecords

	mu       sync.Mutex
	res      Result
	bytes    int
	err      error
	finished bool
	full     bool // the output is full: results are only counted
}

func (e *evaluation) run(src source, mode Mode) {
	switch s := src.(type) {
	case *prefetcher:
		e.runBatches(s)
	case *sliceSource:
		if s.cols != nil {
			e.runColumns(s, mode)
			return
		}
		if mode == Stream {
			e.runSlice(s, len(s.records), func(vals []any, from int) []any { return s.records[from : from+len(vals)] },
				func(i int, vals []any) (int, bool, []any) { return skimValue(e.skim, s.records[i], vals) })
			return
		}
		// The records are the slurped array already; no need to gather
		// them one checkpoint at a time. (Values are never modified in
		// place; the capacity is cut so that an append copies.)
		all := s.records[:len(s.records):len(s.records)]
		if all == nil {
			all = []any{}
		}
		if s.ends != nil || s.offs != nil {
			e.sorted = &sortedRecords{all: all, line: s.rawLine}
		}
		if !e.stopped() {
			e.evalBatch([]any{all}, noLine, nil)
		}
	case *records:
		all, ok := e.gather(s)
		s.release()
		if ok {
			e.evalBatch([]any{all}, noLine, nil)
		}
	}
}

// runColumns evaluates the query on records held as columns, rebuilt a
// batch at a time (all at once in Slurp mode).
func (e *evaluation) runColumns(s *sliceSource, mode Mode) {
	n := s.cols.n
	if mode == Slurp {
		all := s.cols.fill(make([]any, n), 0, nil)
		if s.ends != nil || s.offs != nil {
			e.sorted = &sortedRecords{all: all, line: s.rawLine}
		}
		if !e.stopped() {
			e.evalBatch([]any{all}, noLine, nil)
		}
		return
	}
	maps := make([]map[string]any, batchSize)
	e.runSlice(s, n, func(vals []any, from int) []any { return s.cols.fill(vals, from, maps) },
		func(i int, vals []any) (int, bool, []any) { return s.cols.skim(i, e.skim, vals) })
}

// runSlice evaluates the query on the n records of s a batch at a time,
// get filling vals with those from from on. Once the output is full, the
// query's skimmer (see skimmer) counts the results of the records it can
// tell, skim(i, buffer), and the query runs on the others only.
func (e *evaluation) runSlice(s *sliceSource, n int, get func(vals []any, from int) []any, skim func(i int, vals []any) (int, bool, []any)) {
	buf := make([]any, batchSize)
	for from := 0; from < n && !e.stopped(); {
		size := min(batchSize, n-from)
		if e.skim != nil && e.counting() {
			if from = e.skimFrom(from, n, skim); from == n || e.stopped() {
				return
			}
			size = 1 // a record the check cannot vouch for
		}
		vals := get(buf[:size], from)
		var raw func(int) ([]byte, error)
		if s.ends != nil || s.offs != nil {
			at := from
			raw = func(i int) ([]byte, error) { return s.rawLine(at + i) }
		}
		at := from
		if !e.evalBatch(vals, func(i int) int { return at + i + 1 }, raw) {
			return
		}
		from += size
	}
}

// skimFrom counts the results of the records from from on that skim
// tells, and returns the index of the first it cannot, or n.
func (e *evaluation) skimFrom(from, n int, skim func(i int, vals []any) (int, bool, []any)) int {
	i, results := from, 0
	var vals []any
	for ; i < n; i++ {
		k, ok, buf := skim(i, vals)
		if vals = buf; !ok {
			break
		}
		results += k
		if (i-from+1)%skimStep == 0 && e.stopped() {
			i++
			break
		}
	}
	e.addSkimmed(results)
	return i
}

// noLine is the line of a slurped array: none.
func noLine(int) int { return 0 }

// gather reads every record, for Slurp mode, and, in lazy mode, their
// lines, for the records a sort outputs.
func (e *evaluation) gather(recs *records) ([]any, bool) {
	all := []any{}
	// The lines of the records, or, when the file can be read again,
	// where they are (a file of 100,000 memories: 67 MB, or 1.6).
	lines := &sliceSource{file: recs.file}
	for n := 0; ; n++ {
		// The heap is measured a batch of records at a time, as a stream
		// measures it: reading it for each record took a fifth of a
		// slurp's time (the watchdog reads it every 2 ms meanwhile).
		if n%batchSize == 0 && e.stopped() {
			return nil, false
		}
		v, _, err := recs.next()
		switch {
		case errors.Is(err, io.EOF):
			if recs.lazy {
				e.sorted = &sortedRecords{all: all, line: lines.rawLine}
			}
			return all, true
		case err != nil:
			e.setErr(err)
			return nil, false
		}
		all = append(all, v)
		switch {
		case !recs.lazy:
		case recs.file != nil:
			end := recs.at // an empty line: a record decoded whole
			if recs.raw != nil {
				end += int64(len(recs.raw))
			}
			lines.offs = append(lines.offs, recs.at, end)
		default:
			lines.lines = append(lines.lines, recs.raw...)
			lines.ends = append(lines.ends, len(lines.lines))
		}
	}
}

// sortedRecords are the slurped records of a lazy sort (see lazySort),
// decoded with what the sort reads: the output replaces each by the
// record decoded whole from its line.
type sortedRecords struct {
	all   []any
	line  func(int) ([]byte, error) // nil for a record decoded whole
	index map[unsafe.Pointer]int    // of the maps in all
}

// whole returns the record x, one of all, decoded whole.
func (s *sortedRecords) whole(x any) (any, error) {
	m, ok := x.(map[string]any)
	if !ok {
		return x, nil // not projected
	}
	if s.index == nil {
		s.index = make(map[unsafe.Pointer]int, len(s.all))
		for i, v := range s.all {
			if r, ok := v.(map[string]any); ok {
				s.index[reflect.ValueOf(r).UnsafePointer()] = i
			}
		}
	}
	i, ok := s.index[reflect.ValueOf(m).UnsafePointer()]
	if !ok {
		return nil, errors.New("jqsandbox: internal error: a sorted value is not one of the records")
	}
	text, err := s.line(i)
	if err != nil || text == nil {
		return x, err
	}
	// Orders are not recorded: the projection recorded this line's.
	var dec jsonvalue.Decoder
	w, err := dec.Decode(text)
	if err != nil {
		return nil, limitf(ErrInvalidInput, "line %d: %v", i+1, err)
	}
	return w, nil
}

// runBatches evaluates the query on the records that p decodes, a batch
// at a time.
func (e *evaluation) runBatches(p *prefetcher) {
	go p.fill(e.st.ctx)
	defer p.close()
	for !e.stopped() {
		b, ok := p.nextBatch()
		if !ok {
			e.stopped() // records the context's cause
			return
		}
		raw := func(i int) ([]byte, error) { return b.rawLine(i), nil }
		// Once the output is full, the records that follow are decoded
		// (with the query's projection only) to count their results:
		// an exact count, the same every run.
		if len(b.vals) > 0 && !e.evalBatch(b.vals, b.line, raw) {
			return
		}
		if b.skimmed > 0 {
			e.addSkimmed(b.skimmed)
		}
		if e.counting() {
			p.counting.Store(true)
			if e.skim != nil {
				// The records the skimmer can tell are counted from
				// their lines.
				p.skim.Store(&skimRef{e.skim})
			}
		}
		switch {
		case b.err == nil:
			p.recycle(b)
		case errors.Is(b.err, io.EOF):
			return
		default:
			e.setErr(b.err)
			return
		}
	}
}

// stopped reports (and records) the end of the run by its context. Once
// the output is full, the run only counts the omitted results: its end
// leaves the results shown as they are, and the count unfinished.
func (e *evaluation) stopped() bool {
	e.st.checkpoint()
	if e.st.ctx.Err() == nil {
		return false
	}
	if !e.uncounted() {
		e.setErr(context.Cause(e.st.ctx))
	}
	return true
}

// evalBatch runs the query on each of vals and adds its outputs, until
// the query fails or add says to stop, and reports whether to go on.
// line(i) is the input line of vals[i], for errors. raw, when not nil,
// returns the line of vals[i] when its source projected it for a
// lazySelect query: each output (the record itself) is then the record
// decoded whole from that line.
func (e *evaluation) evalBatch(vals []any, line func(int) int, raw func(int) ([]byte, error)) bool {
	e.st.record = 0
	iter := e.q.code.RunWithContext(e.vm, vals, e.vars...)
	wholeAt, whole := -1, any(nil)
	for {
		x, ok := iter.Next()
		if !ok {
			return true
		}
		at := e.st.record
		if err, ok := x.(error); ok {
			e.fail(err, line(at))
			return false
		}
		text, err := rawAt(raw, at)
		if err != nil {
			e.setErr(err)
			return false
		}
		if text != nil && !e.counting() { // counted, not shown: no need of it whole
			if wholeAt != at {
				// Orders are not recorded: the projection recorded this
				// line's already.
				var dec jsonvalue.Decoder
				w, err := dec.Decode(text)
				if err != nil {
					e.setErr(limitf(ErrInvalidInput, "line %d: %v", line(at), err))
					return false
				}
				wholeAt, whole = at, w
			}
			x = whole
		}
		if !e.add(x) {
			return false
		}
	}
}

// rawAt returns raw(i), or nil when raw is nil.
func rawAt(raw func(int) ([]byte, error), i int) ([]byte, error) {
	if raw == nil {
		return nil, nil
	}
	return raw(i)
}

// fail records the error ending the evaluation of the record on line.
func (e *evaluation) fail(err error, line int) {
	if e.stopped() {
		return
	}
	var he *gojq.HaltError
	if errors.As(err, &he) {
		// A halt ends the results where jq's end: counted exactly.
		if (he.Value() != nil || he.ExitCode() != 0) && !e.counting() {
			e.setErr(&HaltError{Value: errorValue(he.Value()), Code: he.ExitCode(), Record: line})
		}
		return
	}
	if e.uncounted() {
		return // an error while counting omitted results
	}
	var ve gojq.ValueError // error/1; its Error() would encode the whole value
	if errors.As(err, &ve) {
		qe := &QueryError{Record: line}
		if s, ok := ve.Value().(string); ok {
			qe.Message = clip(s)
		} else {
			qe.Value = errorValue(ve.Value())
			qe.Message = string(qe.Value) + " (not a string)"
		}
		e.setErr(qe)
		return
	}
	e.setErr(&QueryError{Message: clip(err.Error()), Record: line})
}

// maxMessage bounds error messages, which the caller may show to the LLM.
const maxMessage = 64 << 10

// clip truncates s to maxMessage bytes (on a rune boundary).
func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	i := maxMessage
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + " ...(truncated)"
}

// errorValue encodes an error value, or a preview of it when large. Like
// results, it is not HTML-escaped: the model reads it, not a browser.
func errorValue(v any) json.RawMessage {
	if _, ok, _ := encodedLen(v, 64<<10, nil); ok {
		b, _ := gojq.Marshal(v)
		return b
	}
	b, _ := gojq.Marshal(gojq.Preview(v))
	return b
}

// add keeps (or counts) a result and reports whether to go on.
func (e *evaluation) add(v any) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.addLocked(v) && !e.known()
}

// addLocked is add; e.mu is held.
func (e *evaluation) addLocked(v any) bool {
	lim := e.st.lim
	if e.full {
		e.res.Omitted++
		return true
	}
	if len(e.res.Values) >= lim.MaxOutputs {
		e.truncate()
		return true
	}
	if arr, isArray := v.([]any); isArray && e.sorted != nil {
		return e.addRecords(arr)
	}
	n, ok, deep := encodedLen(v, lim.MaxOutputBytes-e.bytes, e.st.ctx.Done())
	switch {
	case deep:
		e.err = limitf(ErrTooComplex, "result nested more than %d levels deep", maxDepth)
		return false
	case !ok && e.st.ctx.Err() != nil:
		return false
	case !ok:
		if arr, isArray := v.([]any); isArray {
			kept, goOn := e.addPrefix(arr)
			if !goOn {
				return false
			}
			if kept {
				e.res.Truncated = true
				e.countOmitted()
				return true
			}
		}
		e.truncate()
		return true
	}
	e.res.Values = append(e.res.Values, e.enc.marshalSized(v, n))
	e.bytes += n
	return true
}

// addPrefix keeps the first elements of arr that fit the output, if any
// (Result.Elements), and reports whether it kept them and whether to go
// on; e.mu is held.
func (e *evaluation) addPrefix(arr []any) (kept, goOn bool) {
	room := e.st.lim.MaxOutputBytes - e.bytes
	n, k := 2, 0 // the brackets
	for _, x := range arr {
		m, ok, deep := encodedLen(x, room-n-1, e.st.ctx.Done())
		if deep {
			e.err = limitf(ErrTooComplex, "result nested more than %d levels deep", maxDepth)
			return false, false
		}
		if !ok {
			break
		}
		if k > 0 {
			n++ // a comma
		}
		n += m
		k++
	}
	if k == 0 {
		return false, true
	}
	e.res.Values = append(e.res.Values, e.enc.marshalSized(arr[:k:k], n))
	e.res.Elements = len(arr)
	e.bytes += n
	return true, true
}

// addRecords adds the result of a lazy sort, arr, its records decoded
// whole, as many as fit (see addPrefix); e.mu is held.
func (e *evaluation) addRecords(arr []any) bool {
	room := e.st.lim.MaxOutputBytes - e.bytes
	n, out := 2, make([]any, 0, min(len(arr), 64))
	for _, x := range arr {
		w, err := e.sorted.whole(x)
		if err != nil {
			e.err = err
			return false
		}
		m, ok, deep := encodedLen(w, room-n-1, e.st.ctx.Done())
		if deep {
			e.err = limitf(ErrTooComplex, "result nested more than %d levels deep", maxDepth)
			return false
		}
		if !ok {
			break
		}
		if len(out) > 0 {
			n++ // a comma
		}
		n += m
		out = append(out, w)
	}
	switch {
	case len(out) == len(arr):
		e.res.Values = append(e.res.Values, e.enc.marshalSized(out, n))
		e.bytes += n
	case len(out) == 0:
		e.truncate()
	default:
		e.res.Values = append(e.res.Values, e.enc.marshalSized(out, n))
		e.res.Elements = len(arr)
		e.bytes += n
		e.res.Truncated = true
		e.countOmitted()
	}
	return true
}

// truncate omits the result that did not fit, and starts counting those
// that follow.
func (e *evaluation) truncate() {
	e.res.Truncated = true
	e.res.Omitted++
	e.countOmitted()
}

// addSkimmed counts n results omitted, counted without running the query.
func (e *evaluation) addSkimmed(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.res.Omitted += n
	e.res.skimmed += n
}

// countOmitted marks the output full: the results that follow are only
// counted; e.mu is held.
func (e *evaluation) countOmitted() { e.full = true }

// known reports, once the output is full, whether the count is known
// (Limits.KnownResults): Omitted is then set, and the run stops; e.mu is
// held.
func (e *evaluation) known() bool {
	n := e.st.lim.KnownResults
	if !e.full || n <= 0 {
		return false
	}
	if n < len(e.res.Values) {
		e.res.Uncounted = true // not this query's count: say none
	} else {
		e.res.Omitted = n - len(e.res.Values)
	}
	return true
}

// counting reports whether the output is full.
func (e *evaluation) counting() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.full
}

// uncounted reports whether the output is full, and if so marks the count
// unfinished: the caller stops the run.
func (e *evaluation) uncounted() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.full {
		e.res.Uncounted = true
	}
	return e.full
}

func (e *evaluation) setErr(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
	}
}

func (e *evaluation) finish() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.finished = true
}

func (e *evaluation) result() (Result, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	res := e.res
	res.Values = slices.Clone(res.Values)
	if !e.finished {
		return res, fmt.Errorf("%w (%w: it keeps the sandbox busy until it returns)", context.Cause(e.st.ctx), ErrStuck)
	}
	return res, e.err
}
