package extractworker

import (
	"errors"
	"fmt"
	"strconv"
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
	// wall marks TimeoutFailure's, which a worker words again as
	// WallFailure's (its wall-clock bound is the backstop).
	wall bool
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

// TimeoutFailure is the failure of a query stopped at its deadline in
// wall-clock time: the bound of queries run in the server's own process,
// where one query's CPU time cannot be told from the others'.
func TimeoutFailure(timeout time.Duration) *Failure {
	return &Failure{Kind: KindLimit, Message: fmt.Sprintf("query took longer than %s and was stopped (wall-clock time); narrow it", timeout), wall: true, Deadline: true}
}

// CPUFailure is the failure of a query whose worker used its bound of CPU
// time: the query's own cost, whatever the machine's load.
func CPUFailure(bound time.Duration) *Failure {
	return &Failure{Kind: KindLimit, Message: fmt.Sprintf("query took longer than %s and was stopped (%s of CPU time, its bound); narrow it", bound, bound), Deadline: true}
}

// WallFailure is the failure of a query whose worker reached the
// wall-clock backstop (WallBound of its CPU bound) having used only cpu
// of CPU time: the worker was given little CPU, the machine is busy. One
// that had used its CPU bound already (a builtin that its own watch could
// not stop, before the parent saw it) is CPUFailure's.
func WallFailure(bound, cpu time.Duration) *Failure {
	if cpu >= bound {
		return CPUFailure(bound)
	}
	return &Failure{Kind: KindLimit, Message: fmt.Sprintf("query took longer than %s and was stopped (wall-clock time: its worker got only %s of CPU time of the %s it may use, the machine is busy); retry later, or narrow it", WallBound(bound), cpu.Round(time.Millisecond), bound), Deadline: true}
}

// MemoryFailure is the failure of a query that needed too much memory.
func MemoryFailure() *Failure { return &Failure{Kind: KindLimit, Message: msgMemory} }

// Describe turns an error of jqsandbox into a Failure; timeout is the
// query's, named in the message.
func Describe(err error, timeout time.Duration) *Failure {
	var qe *jqsandbox.QueryError
	var he *jqsandbox.HaltError
	var f *Failure
	var le *jqsandbox.LineError
	switch {
	case errors.As(err, &f):
		return f
	case errors.As(err, &le):
		return lineFailure(le)
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

// lineFailure describes a record too long to decode: it names the limit
// and what reads the file all the same. The records were the reader's:
// the file's header, line 1, is not among them.
func lineFailure(le *jqsandbox.LineError) *Failure {
	return &Failure{Kind: KindFile, Message: fmt.Sprintf(
		"reading the file: record %d (line %d of the file) is longer than %d bytes (%s), the longest record a recipe, query or question reads (a thirty-second of the extract memory bound, MaxHeapBytes). "+
			"grep and lines read every line, a long one cut; or, when that record holds the records you want (an array inside it), name them so that each is a line of its own: ToolPolicy.RecordsField in the server, or lro-proxy -records TOOL=PATH, and call the tool again",
		le.Line, le.Line+1, le.Limit, mebibytes(le.Limit))}
}

// mebibytes writes n bytes in MiB: "16 MiB", "1.5 MiB".
func mebibytes(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) + " MiB"
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
