package lro

import (
	"time"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/jqsandbox"
)

// ExtractLimits bounds lro_extract's queries and says where they run.
// Zero fields take their defaults.
//
// # Where queries run
//
// By default, on Unix, with the default directory FS (or [DirFS]), each
// query (a recipe, a jq filter, a grep or a range of lines) runs in a
// worker process: a copy of this very executable, started
// again with an environment variable that makes an init function of this
// module (linked by lro) serve queries, before the program's main (or a
// test binary's) runs; your main needs no change. A small pool of them is
// kept warm; a file's decoded records live in the worker that read it, and
// later queries of the file go there. This guarantees, whatever the query:
//   - the server's memory is not touched by it: the server holds the
//     call's arguments, the file's header and the query's results, all
//     bounded;
//   - it ends by Timeout: the worker's own deadline stops what gojq can
//     interrupt, and a worker still busy half a second later (in a
//     builtin, a regular expression over a huge string) is killed and
//     replaced; the call says the query took too long;
//   - it uses at most WorkerMemoryBytes: on Linux a hard limit on the
//     memory the worker maps for data (RLIMIT_DATA: heap and stacks,
//     touched or not), past which the worker dies and is replaced and the
//     call says the query needed too much memory; elsewhere (and in
//     builds with the race detector) the limit steers Go's collector, and
//     the heap watchdog below stops the query;
//   - it holds one worker: other calls run on the others, and when every
//     worker is held by a query running for a quarter of a second already,
//     the pool grows, up to twice Workers. A call that finds no worker
//     free within half a second fails with "busy, retry in N s".
//
// What it costs: a worker's start (tens of milliseconds, once), a copy of
// the results through a pipe (tens of microseconds for a screenful), the
// workers' memory (each keeps up to CacheBytes of decoded records), and a
// file decoded once per worker that queries it rather than once per
// process.
//
// Queries run in this process instead when InProcess is set, on other
// systems, when the FS is not a directory of this system (a [MemFS], an
// FS of your own), or when no worker can be started (the executable
// cannot be run again; a warning is logged). There they are bounded by
// jqsandbox's guards and watchdog: runs are serialized; the heap growth is
// measured and a query is stopped past MaxHeapBytes; each builtin that
// could allocate or recurse without bound in a single call is checked
// before it runs; the deadline cancels the rest. That holds for the
// queries the guards know. A builtin that runs long without allocating
// (a regular expression over a long string) cannot be interrupted: it
// keeps the single run slot past its deadline, and other calls fail as
// busy meanwhile; and Go's out-of-memory is fatal to the whole server.
type ExtractLimits struct {
	// Timeout bounds a query's wall-clock time, compiling and decoding
	// included, and a resource read's; default 10s.
	Timeout time.Duration
	// MaxQueryBytes bounds the length of the query text; default 4096.
	MaxQueryBytes int
	// MaxFileBytes bounds the size of the file read, by a query or a
	// resource read (larger files are refused before anything is read);
	// default 256 MiB.
	MaxFileBytes int64
	// MaxHeapBytes bounds the heap growth while a query runs, the decoded
	// records included when they are not cached; default 512 MiB.
	MaxHeapBytes uint64
	// CacheBytes bounds the decoded records kept between queries (an
	// estimate of their size in memory, not of the files'), in each
	// worker (or in this process); default DefaultExtractCacheBytes,
	// negative disables.
	CacheBytes int64

	// InProcess runs queries in this process rather than in worker
	// processes; see above for what that guarantees less. Default false.
	InProcess bool
	// Workers is how many worker processes are kept warm; under load the
	// pool grows to twice as many. Default 2.
	Workers int
	// WorkerMemoryBytes is what a worker may use beyond its footprint at
	// start. Default 1.5 MaxHeapBytes + 5 CacheBytes + 64 MiB (992 MiB
	// with the other defaults).
	WorkerMemoryBytes uint64
	// MaxCalls bounds the lro_extract calls and resources/read of
	// offloaded files (see [Offloader.ReadResource]) the process admits
	// at once, running or waiting; default 16. The process's Offloaders share the
	// count, each checking its own bound.
	MaxCalls int
	// MaxCallBytes bounds the memory the admitted calls may hold in this
	// process: headers and results (a resource read's text), and, for
	// queries run in this process, the records of the files they decode;
	// default 256 MiB.
	MaxCallBytes int64
}

// Defaults of ExtractLimits.
const (
	defaultExtractTimeout = 10 * time.Second
	defaultMaxCalls       = 16
	defaultMaxCallBytes   = 256 << 20
)

// withDefaults replaces the zero fields by their defaults.
func (l ExtractLimits) withDefaults() ExtractLimits {
	if l.Timeout <= 0 {
		l.Timeout = defaultExtractTimeout
	}
	if l.MaxQueryBytes <= 0 {
		l.MaxQueryBytes = jqsandbox.DefaultMaxQueryBytes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = jqsandbox.DefaultMaxInputBytes
	}
	if l.MaxHeapBytes == 0 {
		l.MaxHeapBytes = jqsandbox.DefaultMaxHeapBytes
	}
	if l.CacheBytes == 0 {
		l.CacheBytes = DefaultExtractCacheBytes
	}
	if l.Workers <= 0 {
		l.Workers = 2
	}
	if l.WorkerMemoryBytes == 0 {
		l.WorkerMemoryBytes = l.MaxHeapBytes + l.MaxHeapBytes/2 + 5*uint64(max(l.CacheBytes, 0)) + 64<<20
	}
	if l.MaxCalls <= 0 {
		l.MaxCalls = defaultMaxCalls
	}
	if l.MaxCallBytes <= 0 {
		l.MaxCallBytes = defaultMaxCallBytes
	}
	return l
}

// sandbox returns the jqsandbox limits of a query.
func (l ExtractLimits) sandbox() jqsandbox.Limits {
	return jqsandbox.Limits{Timeout: l.Timeout, MaxQueryBytes: l.MaxQueryBytes, MaxInputBytes: l.MaxFileBytes, MaxHeapBytes: l.MaxHeapBytes}
}

// pool returns the configuration of the worker pool these limits use.
func (l ExtractLimits) pool() extractworker.Config {
	return extractworker.Config{Workers: l.Workers, MemoryBytes: l.WorkerMemoryBytes, CacheBytes: l.CacheBytes}
}
