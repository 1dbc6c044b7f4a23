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
// By default, on Unix, each query (a recipe, a jq filter, a grep or a
// range of lines) runs in a worker process: the program
// lro-worker (cmd/lro-worker: go install
// github.com/mcplro/lro/cmd/lro-worker@VERSION, the version of lro your
// program links), found through WorkerPath, the LRO_WORKER_PATH
// environment variable, beside this executable, or on PATH; else this
// very executable, started again with an environment variable that makes
// an init function of this module serve queries before the program's
// main runs. Your main needs no change either way, but this executable
// run again runs every init function of its packages (Go runs those of
// packages whose import paths sort first before lro's) in each worker, at
// every start: a package that writes a PID file or truncates a log in its
// init does so again. lro-worker runs no code of yours; without it, the
// first use of lro_extract logs this at Info. Files of an FS that is not a
// directory of this system (an object store, an lrotest.MemFS) are copied first
// to a private local file, once, which the workers read. A small pool of
// workers is kept warm; a file's decoded records live in the worker that
// read it, and later queries of the file go there. This guarantees, whatever the query:
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
//   - all queries together use at most MemoryBudget (1 GiB by default):
//     no more than MaxWorkers workers run, and each may use only its
//     share of the budget;
//   - it holds one worker: other calls run on the others, and when every
//     worker is held by a query running for a quarter of a second already,
//     the pool grows, up to MaxWorkers. A call that finds no worker free
//     within half a second fails with "busy, retry in N s", and at once
//     when MaxWorkers workers each hold such a query;
//   - it does not slow the server's other tools: workers run at a lower
//     CPU priority (nice 10) than the server.
//
// What it costs: a worker's start (tens of milliseconds, once), a copy of
// the results through a pipe (tens of microseconds for a screenful), the
// workers' memory (each keeps up to CacheBytes of decoded records), and a
// file decoded once per worker that queries it rather than once per
// process.
//
// Queries run in this process only when InProcess is set. Where workers
// cannot run (other systems; no worker starts, twice in a row) a query
// fails with an error that says why, is counted
// (lro.extract.unisolated), and logged at Warn, through slog.Default when
// no logger is set. In process, queries are bounded by
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
	// negative disables. One file takes at most half of it. What is kept
	// of a file is what its queries read: the fields they name, and, for
	// a select, each record's line (or, in a worker, where the line is in
	// the file), from which the records it outputs are decoded. A file
	// smaller than half of CacheBytes is decoded so before its first
	// query runs; a larger one as its query runs, which keeps what it
	// decoded when it read every record (not when it stopped at a full
	// output) and that fits.
	CacheBytes int64

	// InProcess runs queries in this process rather than in worker
	// processes: it gives up their isolation (see above for what that
	// guarantees less). Default false: queries run only in workers, and a
	// call fails with a clear error where none can run.
	InProcess bool
	// WorkerPath is the program the workers run: a build of
	// cmd/lro-worker, which runs no code of yours. Default: the
	// LRO_WORKER_PATH environment variable, else lro-worker beside this
	// executable, else lro-worker on PATH, else this executable run again
	// (see "Where queries run" above); a program found that answers with
	// another protocol (an older build) is passed over for the next.
	WorkerPath string
	// Workers is how many worker processes are kept warm; under load the
	// pool grows to MaxWorkers. Default 2.
	Workers int
	// MaxWorkers bounds the worker processes that run at once. Default
	// twice Workers, fewer if MemoryBudget cannot give each 384 MiB (two
	// with the default budget).
	MaxWorkers int
	// WorkerMemoryBytes is what a worker may use beyond its footprint at
	// start. Default: its share of MemoryBudget, (MemoryBudget -
	// MaxCallBytes) / MaxWorkers - 32 MiB (384 MiB with the other
	// defaults).
	WorkerMemoryBytes uint64
	// MemoryBudget bounds the memory lro_extract takes in all, in this
	// process and its workers together: the bytes admitted calls hold
	// here (MaxCallBytes) plus, for each of the MaxWorkers workers, its
	// footprint at start (32 MiB) and WorkerMemoryBytes. Default 1 GiB
	// (DefaultExtractMemoryBudget). Fields set beyond it are brought
	// within it: MaxCallBytes to half of it at most, then MaxWorkers
	// lowered (to one at least), then WorkerMemoryBytes, never below 64
	// MiB; a budget under 192 MiB (two such workers) counts as 192 MiB.
	// Queries run in this process take MaxCallBytes and MaxHeapBytes of it
	// (MaxHeapBytes is lowered to fit).
	MemoryBudget uint64
	// MaxCalls bounds the lro_extract calls and resources/read of
	// offloaded files (see [Host.ReadResource]) the process admits at
	// once, running or waiting; default 16. The process's Offloaders share the
	// count, each checking its own bound.
	MaxCalls int
	// MaxCallBytes bounds the memory the admitted calls may hold in this
	// process: headers and results (a resource read's text), and, for
	// queries run in this process, the records of the files they decode;
	// default 3/16 of MemoryBudget (192 MiB), 256 MiB at most.
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
	if l.MaxCalls <= 0 {
		l.MaxCalls = defaultMaxCalls
	}
	return l.withinBudget()
}

// minWorkerMemory is the least WorkerMemoryBytes the budget leaves a
// worker: less, and ordinary queries of a few megabytes fail.
// defaultWorkerMemory is the least a worker gets by default: the
// slurping recipes 8 and 9 over 100,000 full memories (67 MB) need more
// than 288 MiB, and took 6 s at 352 MiB (2 s with room), so the default
// budget runs two workers of 384 MiB rather than four of 160.
const (
	minWorkerMemory     = 64 << 20
	defaultWorkerMemory = 384 << 20
)

// withinBudget sizes the pool and the admission to MemoryBudget; the
// other fields have their defaults.
func (l ExtractLimits) withinBudget() ExtractLimits {
	if l.MemoryBudget == 0 {
		l.MemoryBudget = DefaultExtractMemoryBudget
	}
	budget := max(l.MemoryBudget, 2*(minWorkerMemory+extractworker.FootprintBytes))
	if l.MaxCallBytes <= 0 {
		l.MaxCallBytes = min(defaultMaxCallBytes, int64(budget*3/16))
	}
	l.MaxCallBytes = min(l.MaxCallBytes, int64(budget/2))
	share := budget - uint64(l.MaxCallBytes) // the workers'
	if l.MaxHeapBytes > share {
		l.MaxHeapBytes = share // in process, one query runs at a time
	}
	if l.Workers <= 0 {
		l.Workers = 2
	}
	if l.MaxWorkers <= 0 {
		l.MaxWorkers = 2 * l.Workers
	}
	per := uint64(defaultWorkerMemory) // the fewest bytes a default worker gets
	if l.WorkerMemoryBytes > 0 {
		per = max(minWorkerMemory, l.WorkerMemoryBytes)
	}
	per = min(per, share-extractworker.FootprintBytes) // one worker fits
	l.MaxWorkers = max(1, min(l.MaxWorkers, int(share/(per+extractworker.FootprintBytes))))
	if l.WorkerMemoryBytes == 0 {
		per = share/uint64(l.MaxWorkers) - extractworker.FootprintBytes
	}
	l.WorkerMemoryBytes = per
	l.Workers = min(l.Workers, l.MaxWorkers)
	return l
}

// sandbox returns the jqsandbox limits of a query.
func (l ExtractLimits) sandbox() jqsandbox.Limits {
	return jqsandbox.Limits{Timeout: l.Timeout, MaxQueryBytes: l.MaxQueryBytes, MaxInputBytes: l.MaxFileBytes, MaxHeapBytes: l.MaxHeapBytes}
}

// pool returns the configuration of the worker pool these limits use.
func (l ExtractLimits) pool() extractworker.Config {
	c := extractworker.Config{Workers: l.Workers, MaxWorkers: l.MaxWorkers, MemoryBytes: l.WorkerMemoryBytes, CacheBytes: l.CacheBytes, Executable: l.WorkerPath}
	if c.Executable == "" {
		c.Executable, c.Fallbacks = workerProgram()
	}
	return c
}
