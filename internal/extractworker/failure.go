package extractworker

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcplro/lro/internal/jqsandbox"
)

// Kind classifies a Failure.
type Kind string

// The kinds of Failure.
const (
	// KindQuery: the query does not compile, or raised an error.
	KindQuery Kind = "query"
	// KindLimit: the query was stopped by a bound: time, memory,
	// complexity, size.
	KindLimit Kind = "limit"
	// KindFile: the file could not be read, or changed.
	KindFile Kind = "file"
	// KindBusy: no capacity was free; Message says when to retry.
	KindBusy Kind = "busy"
	// KindInternal: the worker failed for another reason.
	KindInternal Kind = "internal"
)

// Failure says why a query has no (complete) result. Message is written
// for the model that sent the query.
type Failure struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
	// Deadline marks a query stopped at its deadline, which operators
	// count apart from other refusals (lro.extract.calls).
	Deadline bool `json:"deadline,omitempty"`
}

// Error returns the message.
func (f *Failure) Error() string { return f.Message }

// Messages shared by the in-process and the worker paths, so that the model
// reads the same words whichever ran its query.
const (
	msgMemory = "query needed too much memory and was stopped; narrow it"
)

// TimeoutFailure is the failure of a query stopped at its deadline.
func TimeoutFailure(timeout time.Duration) *Failure {
	return &Failure{Kind: KindLimit, Message: fmt.Sprintf("query took longer than %s and was stopped; narrow it", timeout), Deadline: true}
}

// MemoryFailure is the failure of a query that needed too much memory.
func MemoryFailure() *Failure { return &Failure{Kind: KindLimit, Message: msgMemory} }

// Describe turns an error of jqsandbox into a Failure; timeout is the
// query's, named in the message.
func Describe(err error, timeout time.Duration) *Failure {
	var qe *jqsandbox.QueryError
	var he *jqsandbox.HaltError
	var f *Failure
	switch {
	case errors.As(err, &f):
		return f
	case errors.As(err, &qe) && qe.Record > 0:
		return &Failure{Kind: KindQuery, Message: fmt.Sprintf("query failed on record %d: %s", qe.Record, qe.Message)}
	case errors.As(err, &qe):
		return &Failure{Kind: KindQuery, Message: "query failed: " + qe.Message}
	case errors.As(err, &he):
		return &Failure{Kind: KindQuery, Message: "query stopped with halt_error: " + he.Message()}
	case errors.Is(err, jqsandbox.ErrTimeout):
		return TimeoutFailure(timeout)
	case errors.Is(err, jqsandbox.ErrMemory):
		return MemoryFailure()
	case errors.Is(err, jqsandbox.ErrTooComplex):
		return &Failure{Kind: KindLimit, Message: "query stopped: " + trimPrefix(err)}
	case errors.Is(err, jqsandbox.ErrBusy):
		return &Failure{Kind: KindBusy, Message: fmt.Sprintf("busy: another query is still running; retry in %d s", retrySeconds(timeout))}
	case errors.Is(err, jqsandbox.ErrInputTooLarge), errors.Is(err, jqsandbox.ErrInvalidInput):
		return &Failure{Kind: KindFile, Message: "reading the file: " + trimPrefix(err)}
	}
	return &Failure{Kind: KindInternal, Message: trimPrefix(err)}
}

// compileFailure describes an error of Compile: the query is invalid
// (it does not parse, names an unknown function, uses a disabled feature,
// is too long).
func compileFailure(err error) *Failure {
	return &Failure{Kind: KindQuery, Message: "invalid query: " + trimPrefix(err)}
}

func trimPrefix(err error) string {
	return strings.TrimPrefix(err.Error(), "jqsandbox: ")
}

// retrySeconds rounds d up to whole seconds, at least one.
func retrySeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}
