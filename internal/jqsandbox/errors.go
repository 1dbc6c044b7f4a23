package jqsandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. Errors returned by Compile and Run wrap one of these (test
// with errors.Is) or are a *QueryError or *HaltError.
var (
	// ErrTimeout: the run exceeded Limits.Timeout.
	ErrTimeout = errors.New("jqsandbox: query timed out")
	// ErrMemory: the run grew the heap by more than Limits.MaxHeapBytes, or
	// a single operation would have allocated more than is left of it.
	ErrMemory = errors.New("jqsandbox: memory limit exceeded")
	// ErrTooComplex: an operation would recurse too deeply (values nested
	// more than 10000 levels) or do too much work in a single builtin call
	// (quadratic comparisons, huge big-integer products, huge regexes...).
	ErrTooComplex = errors.New("jqsandbox: operation too complex")
	// ErrQueryTooLong: the query is longer than Limits.MaxQueryBytes or
	// nested too deeply.
	ErrQueryTooLong = errors.New("jqsandbox: query too long")
	// ErrInputTooLarge: the input is longer than Limits.MaxInputBytes, or
	// one of its lines is too long.
	ErrInputTooLarge = errors.New("jqsandbox: input too large")
	// ErrInvalidInput: an input line is not valid JSON.
	ErrInvalidInput = errors.New("jqsandbox: invalid input")
	// ErrBusy: another query kept the sandbox busy until the deadline of
	// this one (queries run one at a time).
	ErrBusy = errors.New("jqsandbox: another query is still running")
	// ErrStuck is wrapped, besides the reason it was stopped, by the error
	// of a run whose evaluation did not stop within a second of its end:
	// a builtin call that cannot be interrupted keeps running, and the
	// run slot, until it returns. A process that can should be replaced.
	ErrStuck = errors.New("the evaluation is stuck in a builtin")
)

// LineError is the error of an input line longer than the longest one
// read (a thirty-second of Limits.MaxHeapBytes, at most MaxInputBytes):
// one record that large would take the heap a query may use, decoded. It
// wraps ErrInputTooLarge.
type LineError struct {
	Line  int   // the line's number in the input, from 1
	Limit int64 // the longest line read, in bytes
}

func (e *LineError) Error() string {
	return fmt.Sprintf("jqsandbox: input too large: line %d is longer than %d bytes", e.Line, e.Limit)
}

func (e *LineError) Unwrap() error { return ErrInputTooLarge }

// QueryError is an error of the query itself: it does not parse or compile,
// it uses a disabled feature, or it raised an error while running (error/1,
// a type error, ...). Message is the jq-style description.
type QueryError struct {
	// Message describes the problem, e.g. `cannot iterate over: number (1)`.
	Message string
	// Line and Column locate a parse error in the query (1-based), else 0.
	Line, Column int
	// Record is the 1-based line of the input holding the record being
	// processed when a runtime error happened in Stream mode, else 0.
	Record int
	// Value is the JSON encoding of the value given to error/1 when it is
	// not a string (possibly a truncated preview as a JSON string), else nil.
	Value json.RawMessage
}

// Error returns the message, prefixed by its location.
func (e *QueryError) Error() string {
	s := "jqsandbox: "
	switch {
	case e.Line > 0:
		s += fmt.Sprintf("parse error at line %d, column %d: ", e.Line, e.Column)
	case e.Record > 0:
		s += "error at record on line " + strconv.Itoa(e.Record) + ": "
	}
	return s + e.Message
}

// HaltError is returned when the query calls halt_error: jq would print
// Value to stderr and exit with Code. Results produced before are kept.
type HaltError struct {
	// Value is the JSON encoding of halt_error's input (a JSON string for
	// strings, which jq prints raw).
	Value json.RawMessage
	// Code is the exit code (5 unless given to halt_error/1).
	Code int
	// Record is the 1-based input line of the record being processed in
	// Stream mode, else 0.
	Record int
}

// Error describes the halt_error call.
func (e *HaltError) Error() string {
	return fmt.Sprintf("jqsandbox: halt_error (exit code %d): %s", e.Code, e.Message())
}

// Message returns Value as jq prints it: strings raw, other values as JSON.
func (e *HaltError) Message() string {
	var s string
	if json.Unmarshal(e.Value, &s) == nil {
		return s
	}
	return string(e.Value)
}

// limitf wraps a sentinel with a detail message.
func limitf(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)
}
