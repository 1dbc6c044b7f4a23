package extract

import (
	"time"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/jqsandbox"
)

// Limits is lro.ExtractLimits, whose documentation says what each bound
// guarantees. Zero fields take their defaults.
type Limits struct {
	// Timeout bounds a query's CPU time in its worker, compiling and
	// decoding included (and four times Timeout plus 2 s its wall-clock time, for
	// a worker given no CPU), and a resource read's wall-clock time;
	// default 10s. Queries run in this process (InProcess) are bounded by
	// Timeout of wall-clock time: one query's CPU time cannot be told
	// from the others' there.
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
	// worker (or in this process); default DefaultCacheBytes,
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
	// (DefaultMemoryBudget). Fields set beyond it are brought
	// within it: MaxCallBytes to half of it at most, then MaxWorkers
	// lowered (to one at least), then WorkerMemoryBytes, never below 64
	// MiB; a budget under 192 MiB (two such workers) counts as 192 MiB.
	// Queries run in this process take MaxCallBytes and MaxHeapBytes of it
	// (MaxHeapBytes is lowered to fit).
	MemoryBudget uint64
	// MaxCalls bounds the lro_extract calls and resources/read of
	// offloaded files (see [Host.ReadResource]) the process runs at
	// once; default 16. More calls wait, each session's in its own line
	// (16 deep), taking turns, 30 s at most. The process's Offloaders
	// share the count, each checking its own bound.
	MaxCalls int
	// MaxCallBytes bounds the memory the admitted calls may hold in this
	// process: headers and results (a resource read's text), and, for
	// queries run in this process, the records of the files they decode;
	// default 3/16 of MemoryBudget (192 MiB), 256 MiB at most.
	MaxCallBytes int64
}

// Defaults of Limits.
const (
	// DefaultMemoryBudget is the default of Limits.MemoryBudget
	// (lro.DefaultExtractMemoryBudget).
	DefaultMemoryBudget = 1 << 30
	// DefaultCacheBytes is the default of Limits.CacheBytes
	// (lro.DefaultExtractCacheBytes).
	DefaultCacheBytes = 32 << 20

	defaultExtractTimeout = 10 * time.Second
	defaultMaxCalls       = 16
	defaultMaxCallBytes   = 256 << 20
)

// withDefaults replaces the zero fields by their defaults.
func (l Limits) withDefaults() Limits {
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
		l.CacheBytes = DefaultCacheBytes
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
func (l Limits) withinBudget() Limits {
	if l.MemoryBudget == 0 {
		l.MemoryBudget = DefaultMemoryBudget
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
func (l Limits) sandbox() jqsandbox.Limits {
	return jqsandbox.Limits{Timeout: l.Timeout, MaxQueryBytes: l.MaxQueryBytes, MaxInputBytes: l.MaxFileBytes, MaxHeapBytes: l.MaxHeapBytes}
}

// pool returns the configuration of the worker pool these limits use.
func (l Limits) pool() extractworker.Config {
	c := extractworker.Config{Workers: l.Workers, MaxWorkers: l.MaxWorkers, MemoryBytes: l.WorkerMemoryBytes, CacheBytes: l.CacheBytes, Executable: l.WorkerPath}
	if c.Executable == "" {
		c.Executable, c.Fallbacks = workerProgram()
	}
	return c
}
