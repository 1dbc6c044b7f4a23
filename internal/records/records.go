package records

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unsafe"

	"github.com/mcplro/lro/internal/jsonscan"
)

// A Record is one Record of a set as the engine reads it.
type Record struct {
	Line   []byte  // as the file's line holds it
	Sent   []byte  // as the inline result sends it: a hit with its score, a line of text as it was
	Score  float64 // the relevance score, when scored
	Scored bool
}

// A Source is the records of a set, read in order as often as the
// engine needs. The sources of a tool result are views of its text that
// hold nothing per record: an offload of 20 MB of newlines or of an
// array of a million zeros costs no more memory than the payload itself,
// where a slice of records would cost fifty bytes and more a record.
type Source interface {
	// Count is the number of records.
	Count() int
	// Size is at least the bytes of the records' lines together, without
	// line breaks: the room the quota takes before a file is written.
	Size() int64
	// Each calls yield with Each record in order until yield returns
	// false. The record and what it holds are valid only until yield
	// returns.
	Each(yield func(i int, r *Record) bool) error
}

// Slice are records held one by one: those given to Offload or
// Collect, the content items of a result, the fields of an overflow
// section.
type Slice struct {
	Lines  []json.RawMessage
	Sent   [][]byte // as the result sends them, when not the lines themselves
	Scores []float64
}

func (s Slice) Count() int { return len(s.Lines) }

func (s Slice) Size() int64 {
	var n int64
	for _, l := range s.Lines {
		n += int64(len(l))
	}
	return n
}

func (s Slice) Each(yield func(int, *Record) bool) error {
	var r Record
	for i, l := range s.Lines {
		r = Record{Line: l, Sent: l}
		if s.Sent != nil {
			r.Sent = s.Sent[i]
		}
		if i < len(s.Scores) {
			r.Score, r.Scored = s.Scores[i], true
		}
		if !yield(i, &r) {
			break
		}
	}
	return nil
}

// arrayRecords are the elements of a JSON array, or, when every element
// is a search hit {score, memory}, their memories (the score goes to the
// summary only).
type arrayRecords struct {
	data []byte // the array, valid JSON
	n    int
	hits bool
	// spans locate each element, and the score and memory of a hit, when
	// validating the result found them (within a quarter of its size), or
	// else when they take little room beside data (elements of a hundred
	// bytes and more): later passes then need not look for them again.
	spans []jsonscan.ElementSpan
}

// newArrayRecords finds the array's elements, whether they are all hits,
// and where they are: in spans, when validating the array found them,
// else by reading the array once.
func newArrayRecords(data []byte, spans []jsonscan.ElementSpan) *arrayRecords {
	if spans != nil {
		a := &arrayRecords{data: data, n: len(spans), hits: len(spans) > 0, spans: spans}
		for _, s := range spans {
			if !isHit(s.Pair(), s.A.Of(data), s.B.Of(data)) {
				a.hits = false
				break
			}
		}
		return a
	}
	a := &arrayRecords{data: data, hits: true}
	cache := len(data) <= math.MaxInt32
	limit := len(data) / 4 / int(unsafe.Sizeof(jsonscan.ElementSpan{})) // spans it may hold
	at := func(p []byte) jsonscan.Span {
		if p == nil {
			return jsonscan.Span{}
		}
		start := cap(data) - cap(p) // p is a slice of data
		return jsonscan.Span{Start: int32(start), End: int32(start + len(p))}
	}
	_ = jsonscan.EachPairElement(data, "score", "memory", func(el jsonscan.Element) bool {
		a.n++
		if a.hits && !isHit(el.Pair, el.A, el.B) {
			a.hits = false
		}
		if cache && len(a.spans) == cap(a.spans) {
			// Doubling up to the bound: append's growth would allocate
			// about five times the spans of an array too large for them.
			n := min(max(2*cap(a.spans), 16), limit)
			if cache = n > len(a.spans); cache {
				a.spans = append(make([]jsonscan.ElementSpan, 0, n), a.spans...)
			} else {
				a.spans = nil
			}
		}
		if cache {
			a.spans = append(a.spans, jsonscan.ElementSpan{Value: at(el.Value), A: at(el.A), B: at(el.B)})
		}
		return true
	})
	a.hits = a.hits && a.n > 0
	return a
}

// isHit reports whether an element, with its members score and memory
// when it is an object of just those, is a search hit.
func isHit(pair bool, score, memory []byte) bool {
	return pair && isScore(score) && len(memory) > 0 && memory[0] == '{'
}

func isScore(v []byte) bool { return len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') }

func (a *arrayRecords) Count() int  { return a.n }
func (a *arrayRecords) Size() int64 { return int64(len(a.data)) } // the elements and their separators

func (a *arrayRecords) Each(yield func(int, *Record) bool) error {
	var r Record
	emit := func(i int, el, score, memory []byte) bool {
		r = Record{Line: el, Sent: el}
		if a.hits {
			r.Line = memory
			r.Score, _ = strconv.ParseFloat(string(score), 64)
			r.Scored = true
		}
		return yield(i, &r)
	}
	if a.spans != nil {
		for i, s := range a.spans {
			if !emit(i, s.Value.Of(a.data), s.A.Of(a.data), s.B.Of(a.data)) {
				break
			}
		}
		return nil
	}
	i := 0
	if a.hits {
		return jsonscan.EachPairElement(a.data, "score", "memory", func(el jsonscan.Element) bool {
			ok := emit(i, el.Value, el.A, el.B)
			i++
			return ok
		})
	}
	return jsonscan.EachElement(a.data, func(el []byte) bool {
		ok := emit(i, el, nil, nil)
		i++
		return ok
	})
}

// memberRecords are the members of an object too deep or too wide to
// search (a map from ids to records), one {"key", "value"} record each.
type memberRecords struct {
	obj []byte // valid JSON
	n   int
}

func newMemberRecords(obj []byte) *memberRecords {
	m := &memberRecords{obj: obj}
	_ = jsonscan.Fields(obj, func(jsonscan.Field) bool { m.n++; return true })
	return m
}

func (m *memberRecords) Count() int { return m.n }

func (m *memberRecords) Size() int64 {
	return int64(len(m.obj)) + int64(m.n)*int64(len(`{"key":,"value":}`))
}

func (m *memberRecords) Each(yield func(int, *Record) bool) error {
	var (
		r   Record
		buf []byte
		i   int
	)
	obj := m.obj
	return jsonscan.Fields(obj, func(kv jsonscan.Field) bool {
		// Key and Value are slices of obj: their offsets follow from their
		// capacities.
		start := cap(obj) - cap(kv.Key) - 1 // the member's opening quote
		end := cap(obj) - cap(kv.Value) + len(kv.Value)
		buf = append(buf[:0], `{"key":`...)
		buf = append(buf, obj[start:start+len(kv.Key)+2]...)
		buf = append(buf, `,"value":`...)
		buf = append(append(buf, kv.Value...), '}')
		r = Record{Line: buf, Sent: obj[start:end]}
		ok := yield(i, &r)
		i++
		return ok
	})
}

// lineRecords are the lines of a text, one {"line", "text"} record each,
// so that both grep and jq work on the file. A final line break ends the
// last line rather than starting an empty one; a CR before a line break
// is part of the break. Empty lines have no record (their numbers are
// skipped, so grep -n still tells where a line was): a record is twenty
// bytes and more, and a text of blank lines would make a file twenty-five
// times its size. A record sends the blank lines before it, so that a
// fallback that keeps it keeps them too.
type lineRecords struct {
	text  []byte
	n     int
	bytes int64
}

func newLineRecords(text []byte) *lineRecords {
	text = bytes.TrimSuffix(text, []byte("\n"))
	l := &lineRecords{text: text}
	for _, line := range l.all() {
		l.n++
		l.bytes += int64(len(`{"line":,"text":}`) + decimalLen(line.number) + jsonscan.QuotedLen(line.text))
	}
	return l
}

func (l *lineRecords) Count() int  { return l.n }
func (l *lineRecords) Size() int64 { return l.bytes }

// A numberedLine is a line that is not empty, without its line break.
type numberedLine struct {
	number int    // from 1
	text   []byte // the line
	sent   []byte // the empty lines before it and the line, as the text has them
}

// all yields each line that is not empty, numbered from 0.
func (l *lineRecords) all() func(yield func(int, numberedLine) bool) {
	return func(yield func(int, numberedLine) bool) {
		i, number, from := 0, 0, 0 // from: where the line's empty lines begin
		at := 0
		for line := range bytes.SplitSeq(l.text, []byte("\n")) {
			number++
			start := at
			at += len(line) + 1
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(line) == 0 {
				continue
			}
			if !yield(i, numberedLine{number, line, l.text[from : start+len(line)]}) {
				return
			}
			i++
			from = at
		}
	}
}

func (l *lineRecords) Each(yield func(int, *Record) bool) error {
	var (
		r   Record
		buf []byte
	)
	for i, line := range l.all() {
		if cap(buf) < len(line.text)+32 {
			// One allocation of the size a long line needs, not the
			// sum of append's growth steps: five times it.
			buf = make([]byte, 0, jsonscan.QuotedLen(line.text)+32)
		}
		buf = append(buf[:0], `{"line":`...)
		buf = strconv.AppendInt(buf, int64(line.number), 10)
		buf = append(buf, `,"text":`...)
		buf = jsonscan.AppendQuoted(buf, line.text) // unescaped: a model reads '<', not \u003c
		buf = append(buf, '}')
		r = Record{Line: buf, Sent: line.sent}
		if !yield(i, &r) {
			break
		}
	}
	return nil
}

// decimalLen is the number of digits of n > 0.
func decimalLen(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// FirstRecords returns the first n records of src as the result sends
// them, for a fallback that keeps them: few, since they fit the
// threshold.
func FirstRecords(src Source, n int) [][]byte {
	out := make([][]byte, 0, n)
	if n <= 0 {
		return out
	}
	_ = src.Each(func(i int, r *Record) bool {
		out = append(out, bytes.Clone(r.Sent))
		return i+1 < n
	})
	return out
}

// IsText reports whether src holds the lines of a text, one
// {"line", "text"} record each.
func IsText(src Source) bool {
	_, ok := src.(*lineRecords)
	return ok
}
