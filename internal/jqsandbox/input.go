package jqsandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

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
}

// newRecords returns a reader of JSONL records that records the key order
// of their objects (see keyOrder), keeping of each what p keeps.
func newRecords(r io.Reader, lim Limits, p Projection) *records {
	cr := &countingReader{r: r, max: lim.MaxInputBytes}
	rs := &records{
		br:      bufio.NewReaderSize(cr, 64<<10),
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

// next returns the next record and the 1-based line it is on, or io.EOF.
func (rs *records) next() (any, int, error) {
	for len(rs.pending) == 0 {
		b, err := rs.readLine()
		if err != nil {
			return nil, rs.line, err
		}
		rs.line++
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		rs.raw = nil
		if rs.proj != nil && rs.started && jsonscan.Valid(b) {
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
	return v, rs.line, nil
}

func (rs *records) readLine() ([]byte, error) {
	rs.buf = rs.buf[:0]
	for {
		chunk, err := rs.br.ReadSlice('\n')
		if int64(len(rs.buf)+len(chunk)) > rs.maxLine {
			return nil, limitf(ErrInputTooLarge, "line %d is longer than %d bytes", rs.line+1, rs.maxLine)
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

// A source yields the records of a run and the 1-based input line of each
// (0 when unknown), then io.EOF. keyOrders is the key order of their
// objects, nil when unknown; it may grow while the records are read.
type source interface {
	next() (any, int, error)
	keyOrders() *jsonvalue.KeyOrders
}

// sliceSource yields records decoded beforehand.
type sliceSource struct {
	records []any
	orders  *jsonvalue.KeyOrders
	i       int
}

func (s *sliceSource) keyOrders() *jsonvalue.KeyOrders { return s.orders }

func (s *sliceSource) next() (any, int, error) {
	if s.i >= len(s.records) {
		return nil, 0, io.EOF
	}
	s.i++
	return s.records[s.i-1], s.i, nil
}

// readerSource returns the source of a JSONL reader. In Stream mode a
// second goroutine decodes ahead while the query runs, which halves the
// time of a large file on two cores.
func readerSource(r io.Reader, lim Limits, mode Mode, p Projection, lazy bool) source {
	recs := newRecords(r, lim, p)
	recs.lazy = lazy && recs.proj != nil
	if mode == Slurp {
		return recs
	}
	return &prefetcher{recs: recs, ch: make(chan batch, 4), quit: make(chan struct{}), done: make(chan struct{})}
}

// Records are the decoded records of a JSONL file with the key order of
// their objects, which the decoded values (Go maps) do not keep: results
// print keys in that order, as jq does. They are immutable and may be
// shared by concurrent runs.
type Records struct {
	values []any
	orders *jsonvalue.KeyOrders
	proj   Projection
	bytes  int64
}

// Projection returns what was kept of each record.
func (r *Records) Projection() Projection { return r.proj }

// Bytes returns an estimate of the memory the records take.
func (r *Records) Bytes() int64 { return r.bytes }

// Len returns the number of records.
func (r *Records) Len() int {
	if r == nil {
		return 0
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
// the records answer the queries whose projection p covers.
func DecodeProjected(r io.Reader, lim Limits, p Projection) (*Records, error) {
	recs := newRecords(r, lim.withDefaults(), p)
	out := []any{}
	for {
		v, _, err := recs.next()
		if errors.Is(err, io.EOF) {
			return &Records{values: out, orders: recs.keyOrders(), proj: p, bytes: recs.bytes}, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

type batch struct {
	vals  []any
	lines []int
	err   error
	// raw holds, in lazy mode, the lines of the projected records, one
	// after the other; ends[i] is where that of vals[i] ends (equal to
	// the previous end for a record decoded whole).
	raw  []byte
	ends []int
}

const batchSize = 64

// prefetcher decodes records on its own goroutine, a batch at a time.
type prefetcher struct {
	recs *records
	ch   chan batch
	quit chan struct{}
	done chan struct{}

	cur batch
	pos int
}

func (p *prefetcher) fill(ctx context.Context) {
	defer close(p.done)
	defer close(p.ch)
	for {
		b := batch{vals: make([]any, 0, batchSize), lines: make([]int, 0, batchSize)}
		for len(b.vals) < batchSize {
			v, line, err := p.recs.next()
			if err != nil {
				b.err = err
				break
			}
			b.vals, b.lines = append(b.vals, v), append(b.lines, line)
			if p.recs.lazy {
				b.raw = append(b.raw, p.recs.raw...)
				b.ends = append(b.ends, len(b.raw))
			}
		}
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

func (p *prefetcher) keyOrders() *jsonvalue.KeyOrders { return p.recs.keyOrders() }

func (p *prefetcher) next() (any, int, error) {
	for p.pos >= len(p.cur.vals) {
		if p.cur.err != nil {
			return nil, p.recs.line, p.cur.err
		}
		b, ok := <-p.ch
		if !ok {
			return nil, p.recs.line, errPrefetchStopped
		}
		p.cur, p.pos = b, 0
	}
	p.pos++
	return p.cur.vals[p.pos-1], p.cur.lines[p.pos-1], nil
}

// rawLine returns the line of the record next returned last when it was
// projected in lazy mode, else nil.
func (p *prefetcher) rawLine() []byte {
	if !p.recs.lazy {
		return nil
	}
	i := p.pos - 1
	start := 0
	if i > 0 {
		start = p.cur.ends[i-1]
	}
	if start == p.cur.ends[i] {
		return nil
	}
	return p.cur.raw[start:p.cur.ends[i]]
}

// close stops the decoding goroutine and waits for it, so that nothing of
// the run outlives it.
func (p *prefetcher) close() {
	close(p.quit)
	<-p.done
}

// errPrefetchStopped: the decoder stopped because the run's context ended;
// the evaluation reports the context's cause instead.
var errPrefetchStopped = errors.New("jqsandbox: input stopped")
