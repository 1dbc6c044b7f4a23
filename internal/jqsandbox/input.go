package jqsandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/jsonvalue"
)

// records reads the JSONL input: one JSON value per non-blank line (several
// values on one line are accepted, as jq does). A leading
// {"type":"lro_header",...} value is skipped, in case the caller did not.
//
// Numbers are decoded as float64, like jq 1.6 which stores every number as a
// double: results then print as jq 1.6 prints them (1.0 as 1, 0.85 as 0.85,
// integers beyond 2^53 rounded). json.Number would keep the input text
// verbatim in gojq's output and turn long integers into big integers.
type records struct {
	br      *bufio.Reader
	maxLine int64
	line    int
	buf     []byte
	pending []any
	started bool
	dec     jsonvalue.Decoder
	// proj, when set, is what to keep of each record (see Projection).
	proj  *projNode
	pd    projDecoder
	one   [1]any
	bytes int64 // estimate of the decoded size of the records read
	// lazy keeps the lines a projection could not decode whole, and
	// sets raw to the line of each projected record (see lazySelect).
	lazy bool
	raw  []byte
	// keep, when set, gathers the records read (see Query.RunKeeping).
	keep *keeper
	// pos counts the bytes of the lines read; at is where the last line
	// read starts.
	pos, at int64
	// file, when not nil, holds what the records are read from, at the
	// same offsets (see Query.RunKeeping).
	file io.ReaderAt
	// skim, once set (the output is full), counts in skimmed the
	// results of the lines it can tell, rather than decode them (see
	// skimmer); skimmedLines counts those lines.
	skim                  skimmer
	skimmed, skimmedLines int
	fields                []jsonscan.Field // skimLine's buffer
}

// skimLine counts the results of line when rs.skim can tell them, and
// reports whether it could.
func (rs *records) skimLine(line []byte) bool {
	n, ok, fields := rs.skim.line(line, rs.fields)
	rs.fields = fields
	if ok {
		rs.skimmed += n
		rs.skimmedLines++
	}
	return ok
}

// skimRef holds a skimmer for an atomic.Pointer.
type skimRef struct{ s skimmer }

// errSkimmed is what next returns after skimStep lines skimmed, so that
// its caller may look at the run's end.
var errSkimmed = errors.New("jqsandbox: lines skimmed")

const skimStep = 1 << 14

// keeper gathers the records a run decodes from a file, for a cache, as
// long as they take at most max bytes; done is set once every record
// was read.
type keeper struct {
	max  int64
	recs *Records // nil once the records take more than max
	done bool
	// offsets keeps where the lines are rather than the lines, which the
	// records' reader can read again.
	offsets bool
}

// add keeps v, read by rs (with its line, when rs keeps lines).
func (k *keeper) add(v any, rs *records) {
	if k.recs == nil {
		return
	}
	r := k.recs
	size := rs.bytes
	if r.cols != nil {
		r.cols.add(v)
		size = r.cols.bytes
	} else {
		r.values = append(r.values, v)
	}
	switch {
	case r.proj.lines && k.offsets:
		end := rs.at // an empty line: a record decoded whole
		if rs.raw != nil {
			end += int64(len(rs.raw))
		}
		r.offs = append(r.offs, rs.at, end)
	case r.proj.lines:
		r.lines = append(r.lines, rs.raw...) // rs.raw is nil for a record decoded whole
		r.ends = append(r.ends, len(r.lines))
	}
	if size+int64(len(r.lines))+8*int64(len(r.ends)+len(r.offs)) > k.max {
		k.recs = nil // let them go: the file is too large to keep
	}
}

// records returns the records gathered, if they are all the file's.
func (k *keeper) records(rs *records) *Records {
	if k == nil || !k.done || k.recs == nil {
		return nil
	}
	r := k.recs
	r.orders = rs.keyOrders()
	if cap(r.lines) > len(r.lines)+len(r.lines)/8 {
		r.lines = slices.Clone(r.lines)
	}
	r.bytes = rs.bytes + 16*int64(cap(r.values)-len(r.values))
	if r.cols != nil {
		r.cols.trim()
		r.bytes = r.cols.bytes
	}
	r.offs = slices.Clip(r.offs)
	r.bytes += int64(cap(r.lines)) + 8*int64(cap(r.ends)+cap(r.offs))
	return r
}

// readers keeps the buffers records are read through (readBuffer
// bytes): a query of a small file would otherwise spend a good part of
// its time allocating and clearing one.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBuffer) }}

const readBuffer = 64 << 10

// newRecords returns a reader of JSONL records that records the key order
// of their objects (see keyOrder), keeping of each what p keeps. Its
// release hands back its buffer once it is read no more.
func newRecords(r io.Reader, lim Limits, p Projection) *records {
	cr := &countingReader{r: r, max: lim.MaxInputBytes}
	br := readers.Get().(*bufio.Reader)
	br.Reset(cr)
	rs := &records{
		br:      br,
		maxLine: lim.maxLineBytes(),
		dec:     jsonvalue.Decoder{Orders: jsonvalue.NewKeyOrders()},
	}
	if !p.Whole() {
		rs.proj = p.root
		rs.pd = projDecoder{root: p.root, dec: &rs.dec}
	}
	return rs
}

func (rs *records) keyOrders() *jsonvalue.KeyOrders { return rs.dec.Orders }

// release hands back the buffer of rs, which must not be read again.
func (rs *records) release() {
	if rs.br != nil {
		rs.br.Reset(nil)
		readers.Put(rs.br)
		rs.br = nil
	}
}

// next returns the next record and the 1-based line it is on, or io.EOF.
func (rs *records) next() (any, int, error) {
	for len(rs.pending) == 0 {
		b, err := rs.readLine()
		if err != nil {
			if rs.keep != nil && errors.Is(err, io.EOF) {
				rs.keep.done = true
			}
			return nil, rs.line, err
		}
		rs.line++
		rs.at = rs.pos
		rs.pos += int64(len(b))
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if rs.skim != nil && rs.started && rs.skimLine(b) {
			if rs.skimmedLines%skimStep == 0 {
				return nil, rs.line, errSkimmed
			}
			continue
		}
		rs.raw = nil
		if rs.proj != nil && rs.started { // decode validates the line
			if v, ok := rs.pd.decode(b); ok {
				if rs.lazy {
					rs.raw = b
				}
				rs.one[0] = v
				rs.pending = rs.one[:]
				rs.bytes += 16 + rs.pd.bytes
				rs.pd.bytes = 0
				continue
			}
			rs.pd.bytes = 0
		}
		vs, err := rs.decodeAll(b)
		if err != nil {
			return nil, rs.line, limitf(ErrInvalidInput, "line %d: %v", rs.line, err)
		}
		if !rs.started && len(vs) > 0 {
			rs.started = true
			if m, ok := vs[0].(map[string]any); ok && m["type"] == "lro_header" {
				vs = vs[1:]
			}
		}
		if rs.proj != nil && !rs.lazy {
			for i, v := range vs {
				vs[i] = projectValue(v, rs.proj)
			}
		}
		rs.bytes += int64(len(vs))*16 + decodeFactor*int64(len(b))
		rs.pending = vs
	}
	v := rs.pending[0]
	rs.pending = rs.pending[1:]
	if rs.keep != nil {
		rs.keep.add(v, rs)
	}
	return v, rs.line, nil
}

// readLine returns the next line, valid until the next call: most lines
// are whole in the reader's buffer, and are not copied.
func (rs *records) readLine() ([]byte, error) {
	rs.buf = rs.buf[:0]
	for {
		chunk, err := rs.br.ReadSlice('\n')
		if int64(len(rs.buf)+len(chunk)) > rs.maxLine {
			return nil, &LineError{Line: rs.line + 1, Limit: rs.maxLine}
		}
		if err == nil && len(rs.buf) == 0 {
			return chunk, nil
		}
		rs.buf = append(rs.buf, chunk...)
		switch {
		case err == nil:
			return rs.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF) && len(rs.buf) > 0:
			return rs.buf, nil
		case errors.Is(err, io.EOF), errors.Is(err, ErrInputTooLarge):
			return nil, err
		default:
			return nil, fmt.Errorf("jqsandbox: reading input: %w", err)
		}
	}
}

// decodeAll decodes the JSON values of one line. The objects of a line
// holding several values keep no key order.
func (rs *records) decodeAll(b []byte) ([]any, error) {
	if v, err := rs.dec.Decode(b); err == nil { // the usual case: a single value
		return []any{v}, nil
	}
	dec := newDecoder(bytes.NewReader(b))
	var vs []any
	for {
		v, err := decode(dec)
		if errors.Is(err, io.EOF) {
			return vs, nil
		} else if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
}

func newDecoder(r io.Reader) *json.Decoder {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return dec
}

// decode decodes the next value of a decoder made by newDecoder. Numbers
// out of the float64 range become infinities (printed as +-MaxFloat64, as
// jq 1.6 does) instead of failing like encoding/json does.
func decode(dec *json.Decoder) (any, error) {
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return toFloats(v), nil
}

func toFloats(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := strconv.ParseFloat(string(v), 64) // ±Inf when out of range
		return f
	case []any:
		for i, x := range v {
			v[i] = toFloats(x)
		}
	case map[string]any:
		for k, x := range v {
			v[k] = toFloats(x)
		}
	}
	return v
}

// countingReader fails once more than max bytes have been read.
type countingReader struct {
	r      io.Reader
	n, max int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, limitf(ErrInputTooLarge, "more than %d bytes", c.max)
	}
	if rem := c.max + 1 - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// normalize converts a variable value to the plain values gojq accepts
// (numbers as float64, like the records), bounding its depth.
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decode(newDecoder(bytes.NewReader(b)))
}

// A source holds the records of a run: a *sliceSource, a *prefetcher
// (Stream mode over a reader) or *records (Slurp mode over a reader; see
// evaluation.run). keyOrders is the key order of their objects, nil when
// unknown; it may grow while the records are read.
type source interface {
	keyOrders() *jsonvalue.KeyOrders
}

// sliceSource holds records decoded beforehand, the i-th on line i+1;
// lines and ends, when set, hold the lines of the projected records, for a
// lazy select (see Records).
type sliceSource struct {
	records []any
	cols    *columns // instead of records, when set
	orders  *jsonvalue.KeyOrders
	lines   []byte
	ends    []int
	offs    []int64     // instead of lines: where they are in file
	file    io.ReaderAt // nil: the lines cannot be read
	buf     []byte
}

// rawLine returns the line of records[i] when it is kept (the record was
// projected), else nil.
func (s *sliceSource) rawLine(i int) ([]byte, error) {
	if s.offs == nil {
		return lineAt(s.lines, s.ends, i), nil
	}
	start, end := s.offs[2*i], s.offs[2*i+1]
	if start == end {
		return nil, nil
	}
	if s.file == nil {
		return nil, errors.New("jqsandbox: the records' file is needed to read their lines")
	}
	s.buf = slices.Grow(s.buf[:0], int(end-start))[:end-start]
	if _, err := s.file.ReadAt(s.buf, start); err != nil {
		return nil, fmt.Errorf("jqsandbox: reading a record again: %w", err)
	}
	return s.buf, nil
}

// lineAt returns the i-th of the lines held one after the other in lines,
// each ending at its ends[i], or nil when it is empty (its record was
// decoded whole).
func lineAt(lines []byte, ends []int, i int) []byte {
	if len(ends) == 0 {
		return nil
	}
	start := 0
	if i > 0 {
		start = ends[i-1]
	}
	if start == ends[i] {
		return nil
	}
	return lines[start:ends[i]]
}

func (s *sliceSource) keyOrders() *jsonvalue.KeyOrders { return s.orders }

// readerSource returns the source of a JSONL reader. In Stream mode a
// second goroutine decodes ahead while the query runs, which halves the
// time of a large file on two cores.
func readerSource(r io.Reader, lim Limits, mode Mode, p Projection, lazy bool) source {
	recs := newRecords(r, lim, p)
	recs.lazy = lazy && recs.proj != nil
	if mode == Slurp {
		return recs
	}
	return newPrefetcher(recs)
}

// Records are the decoded records of a JSONL file with the key order of
// their objects, which the decoded values (Go maps) do not keep: results
// print keys in that order, as jq does. They are immutable and may be
// shared by concurrent runs.
//
// Records decoded with a projection that keeps lines (see
// Query.CacheProjection) hold, beside each projected record, its line:
// lines holds them one after the other, that of values[i] ending at
// ends[i] (empty for a record that could not be projected, decoded
// whole).
//
// Records a query kept of a large file (see Query.RunKeeping) are held as
// columns, values nil.
//
// Records kept with offsets (Query.RunKeeping) hold, instead of lines,
// where each line is in the reader the records were read from, offs[2i]
// to offs[2i+1]: a query that needs the lines runs over At(the file).
type Records struct {
	values []any
	cols   *columns
	orders *jsonvalue.KeyOrders
	proj   Projection
	bytes  int64
	lines  []byte
	ends   []int
	offs   []int64
	file   io.ReaderAt // set by At
}

// NeedsFile reports whether a query of these records may need their file
// (see At): their lines were not kept, only where they are.
func (r *Records) NeedsFile() bool { return r != nil && r.offs != nil }

// At returns records r reading their lines from f, which holds the bytes
// that the reader r was decoded from held, at the same offsets.
func (r *Records) At(f io.ReaderAt) *Records {
	c := *r
	c.file = f
	return &c
}

// Projection returns what was kept of each record.
func (r *Records) Projection() Projection { return r.proj }

// Bytes returns an estimate of the memory the records take.
func (r *Records) Bytes() int64 { return r.bytes }

// Len returns the number of records.
func (r *Records) Len() int {
	switch {
	case r == nil:
		return 0
	case r.cols != nil:
		return r.cols.n
	}
	return len(r.values)
}

// DecodeRecords reads every record of a JSONL reader (a leading lro_header
// line is skipped), within lim's input bounds. Use it with RunRecords to
// decode a file once for many queries.
func DecodeRecords(r io.Reader, lim Limits) (*Records, error) {
	return DecodeProjected(r, lim, Projection{})
}

// DecodeProjected is DecodeRecords keeping of each record what p keeps:
// the records answer the queries whose projection p covers (see
// Query.CacheProjection).
func DecodeProjected(r io.Reader, lim Limits, p Projection) (*Records, error) {
	return DecodeProjectedSize(r, lim, p, 0)
}

// DecodeProjectedSize is DecodeProjected of a reader of about size bytes:
// records that keep their lines keep them in one buffer of that size,
// rather than one grown as they are read (a tenth of the decoding of a
// small file went to growing it).
func DecodeProjectedSize(r io.Reader, lim Limits, p Projection, size int64) (*Records, error) {
	lim = lim.withDefaults()
	recs := newRecords(r, lim, p)
	defer recs.release()
	recs.lazy = p.lines && recs.proj != nil
	out := &Records{values: []any{}, orders: recs.keyOrders(), proj: p}
	if recs.lazy && size > 0 {
		out.lines = make([]byte, 0, min(size, lim.MaxInputBytes))
	}
	for {
		v, _, err := recs.next()
		if errors.Is(err, io.EOF) {
			if cap(out.lines) > len(out.lines)+len(out.lines)/8 {
				// Kept for as long as the records: not the room to grow.
				out.lines = slices.Clone(out.lines)
			}
			out.bytes = recs.bytes + int64(cap(out.lines)) + 8*int64(cap(out.ends))
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out.values = append(out.values, v)
		if recs.lazy {
			// recs.raw is valid until the next line is read.
			out.lines = append(out.lines, recs.raw...)
			out.ends = append(out.ends, len(out.lines))
		}
	}
}

// batch is a run of records decoded together.
type batch struct {
	vals  []any
	lines []int
	err   error // after vals: io.EOF, or why decoding stopped
	// raw holds, in lazy mode, the lines of the projected records, one
	// after the other; ends[i] is where that of vals[i] ends (equal to
	// the previous end for a record decoded whole).
	raw  []byte
	ends []int
	// skimmed counts the results of the lines read with the batch, after
	// vals, that were counted without being decoded (see onceCheck).
	skimmed int
}

// line returns the input line of vals[i].
func (b *batch) line(i int) int { return b.lines[i] }

// rawLine returns the line of vals[i] when it was projected in lazy mode,
// else nil.
func (b *batch) rawLine(i int) []byte { return lineAt(b.raw, b.ends, i) }

const (
	batchSize = 64
	// batchesAhead bounds the batches decoded ahead of the query.
	batchesAhead = 4
	// maxPooledRaw bounds the lines a pooled batch keeps room for.
	maxPooledRaw = 1 << 20
)

// batches keeps the batches of past runs, with their buffers: lazy mode
// copies every line into one.
var batches = sync.Pool{New: func() any {
	return &batch{vals: make([]any, 0, batchSize), lines: make([]int, 0, batchSize)}
}}

// reset empties b for reuse, letting go of the records it held.
func (b *batch) reset() {
	clear(b.vals)
	if cap(b.raw) > maxPooledRaw {
		b.raw = nil
	}
	*b = batch{vals: b.vals[:0], lines: b.lines[:0], raw: b.raw[:0], ends: b.ends[:0]}
}

// prefetcher decodes records on its own goroutine, a batch at a time,
// while the query runs on the previous ones.
type prefetcher struct {
	recs *records
	ch   chan *batch
	// free holds the batches the query is done with, for fill to reuse
	// (and batches, once the run ends).
	free chan *batch
	quit chan struct{}
	done chan struct{}
	// skim is set by the run once its output is full, when its query
	// yields one result per record that passes the check.
	skim atomic.Pointer[skimRef]
	// counting is set by the run once its output is full.
	counting atomic.Bool
}

func newPrefetcher(recs *records) *prefetcher {
	return &prefetcher{
		recs: recs,
		ch:   make(chan *batch, batchesAhead),
		free: make(chan *batch, batchesAhead+2),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
}

func (p *prefetcher) fill(ctx context.Context) {
	defer close(p.done)
	defer close(p.ch)
	for {
		b := p.reuse()
		// Once the output is full, results are counted, not shown: the
		// lines a lazy select keeps to decode them whole are not needed.
		lines := p.recs.lazy && !p.counting.Load()
		for len(b.vals) < batchSize {
			if c := p.skim.Load(); c != nil && p.recs.skim == nil {
				p.recs.skim = c.s
				if p.recs.keep != nil {
					p.recs.keep.recs = nil // the lines skimmed are not kept
				}
			}
			v, line, err := p.recs.next()
			if errors.Is(err, errSkimmed) {
				break // sent, so that the run's end is seen
			}
			if err != nil {
				b.err = err
				break
			}
			b.vals, b.lines = append(b.vals, v), append(b.lines, line)
			if lines {
				b.raw = append(b.raw, p.recs.raw...)
				b.ends = append(b.ends, len(b.raw))
			}
		}
		b.skimmed, p.recs.skimmed = p.recs.skimmed, 0
		select {
		case p.ch <- b:
		case <-p.quit:
			return
		case <-ctx.Done():
			return
		}
		if b.err != nil {
			return
		}
	}
}

// reuse returns an empty batch: one the query is done with, or a
// pooled one.
func (p *prefetcher) reuse() *batch {
	var b *batch
	select {
	case b = <-p.free:
	default:
		b = batches.Get().(*batch)
	}
	b.reset()
	return b
}

// recycle hands back a batch the query is done with.
func (p *prefetcher) recycle(b *batch) {
	select {
	case p.free <- b:
	default:
		b.reset()
		batches.Put(b)
	}
}

func (p *prefetcher) keyOrders() *jsonvalue.KeyOrders { return p.recs.keyOrders() }

// nextBatch returns the next batch, or false when decoding stopped for
// the run's context.
func (p *prefetcher) nextBatch() (*batch, bool) {
	b, ok := <-p.ch
	return b, ok
}

// close stops the decoding goroutine and waits for it, so that nothing of
// the run outlives it.
func (p *prefetcher) close() {
	close(p.quit)
	<-p.done
	p.recs.release()
	for {
		select {
		case b := <-p.free:
			b.reset()
			batches.Put(b)
		default:
			return
		}
	}
}
