package jqsandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
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
}

func newRecords(r io.Reader, lim Limits) *records {
	cr := &countingReader{r: r, max: lim.MaxInputBytes}
	return &records{br: bufio.NewReaderSize(cr, 64<<10), maxLine: lim.maxLineBytes()}
}

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
		vs, err := decodeAll(b)
		if err != nil {
			return nil, rs.line, limitf(ErrInvalidInput, "line %d: %v", rs.line, err)
		}
		if !rs.started && len(vs) > 0 {
			rs.started = true
			if m, ok := vs[0].(map[string]any); ok && m["type"] == "lro_header" {
				vs = vs[1:]
			}
		}
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

// decodeAll decodes the JSON values of one line.
func decodeAll(b []byte) ([]any, error) {
	var v any
	if json.Unmarshal(b, &v) == nil { // the usual case: a single value
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
