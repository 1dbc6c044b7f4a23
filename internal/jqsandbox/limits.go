package jqsandbox

import "time"

// Limits bounds one compilation or run. The zero value of a field (or a
// negative value) selects its default, so Limits{} is the same as
// DefaultLimits().
type Limits struct {
	// Timeout bounds the wall-clock time of a run, including reading the
	// input. Default 5s.
	Timeout time.Duration
	// MaxQueryBytes bounds the length of the query text. Default 4096.
	MaxQueryBytes int
	// MaxInputBytes bounds the number of bytes read from the JSONL input.
	// A single line may not exceed min(MaxInputBytes, MaxHeapBytes/32)
	// bytes, because decoding one line cannot be interrupted and may expand
	// it considerably in memory. Default 256 MiB.
	MaxInputBytes int64
	// MaxOutputs bounds the number of results kept. Default 10000.
	MaxOutputs int
	// MaxOutputBytes bounds the total size of the encoded results kept.
	// Default 4 MiB.
	MaxOutputBytes int
	// MaxHeapBytes is the heap growth (over the heap size when the run
	// started) allowed while a query runs before it is aborted with
	// ErrMemory. It includes the decoded input records. Default 512 MiB.
	MaxHeapBytes uint64
	// KnownResults, when above 0, is how many results the query has in
	// Stream mode over the same records, counted exactly by an earlier run
	// (a cache of counts): once the output is full, the run stops there,
	// and Omitted is KnownResults less the results kept. Not sent to a
	// worker: it is the worker's own knowledge.
	KnownResults int `json:"-"`
}

// Defaults, see Limits.
const (
	DefaultTimeout        = 5 * time.Second
	DefaultMaxQueryBytes  = 4096
	DefaultMaxInputBytes  = 256 << 20
	DefaultMaxOutputs     = 10000
	DefaultMaxOutputBytes = 4 << 20
	DefaultMaxHeapBytes   = 512 << 20
)

// Fixed bounds that are not worth a Limits field.
const (
	// maxDepth bounds the nesting depth of values handed to builtins that
	// recurse in Go (comparison, encoding, flatten, ...) and of results.
	// Go's encoding/json uses the same limit when decoding.
	maxDepth = 10000
	// maxQueryDepth bounds the nesting depth of the query syntax tree.
	maxQueryDepth = 2000
	// workBudget bounds the element comparisons of the quadratic builtins
	// (array subtraction, indices, contains), roughly a second of CPU.
	workBudget = 100_000_000
	// maxBigIntBits bounds the size of an arbitrary-precision product.
	maxBigIntBits = 1 << 20
	// maxNumberText bounds the length of a string passed to tonumber.
	maxNumberText = 4096
	// maxRegexBytes bounds the length of a regular expression.
	maxRegexBytes = 32 << 10
	// maxRegexes bounds the distinct regular expressions of one run (gojq
	// caches every compiled expression in the Query).
	maxRegexes = 1000
	// maxTimeFormat bounds strftime format strings (each directive may be
	// padded to 1024 bytes).
	maxTimeFormat = 1024
	// maxIndexNodes bounds an array used as an index (.[[1,2]] searches
	// for a sub-array at every position of the indexed array, which the
	// guard does not see).
	maxIndexNodes = 16
)

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{
		Timeout:        DefaultTimeout,
		MaxQueryBytes:  DefaultMaxQueryBytes,
		MaxInputBytes:  DefaultMaxInputBytes,
		MaxOutputs:     DefaultMaxOutputs,
		MaxOutputBytes: DefaultMaxOutputBytes,
		MaxHeapBytes:   DefaultMaxHeapBytes,
	}
}

// withDefaults replaces unset fields by their defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxQueryBytes <= 0 {
		l.MaxQueryBytes = d.MaxQueryBytes
	}
	if l.MaxInputBytes <= 0 {
		l.MaxInputBytes = d.MaxInputBytes
	}
	if l.MaxOutputs <= 0 {
		l.MaxOutputs = d.MaxOutputs
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = d.MaxOutputBytes
	}
	if l.MaxHeapBytes == 0 {
		l.MaxHeapBytes = d.MaxHeapBytes
	}
	return l
}

// maxLineBytes is the longest input line accepted.
func (l Limits) maxLineBytes() int64 {
	return min(l.MaxInputBytes, int64(l.MaxHeapBytes/32))
}

// nodeBudget bounds the number of value nodes a guard walks (shared
// subtrees count every time they are reachable, as they do for the
// builtins). A non-shared value of MaxHeapBytes has fewer nodes.
func (l Limits) nodeBudget() int {
	return int(max(l.MaxHeapBytes/16, 1<<16))
}
