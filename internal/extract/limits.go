package extract

import (
	"time"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/jqsandbox"
)

// Limits is lro.ExtractLimits, converted: the fields are the same, and
// their documentation (what each bound guarantees, its default) is
// there. Zero fields take their defaults.
type Limits struct {
	Timeout           time.Duration
	MaxQueryBytes     int
	MaxFileBytes      int64
	MaxHeapBytes      uint64
	CacheBytes        int64
	InProcess         bool
	WorkerPath        string
	Workers           int
	MaxWorkers        int
	WorkerMemoryBytes uint64
	MemoryBudget      uint64
	MaxCalls          int
	MaxCallBytes      int64
}

// Defaults of Limits.
const (
	// DefaultMemoryBudget is the default of Limits.MemoryBudget
	// (lro.DefaultExtractMemoryBudget).
	DefaultMemoryBudget = 1 << 30
	// DefaultCacheBytes is the default of Limits.CacheBytes
	// (lro.DefaultExtractCacheBytes).
	DefaultCacheBytes = 32 << 20

	// workerCacheShare: a worker's FileCache takes by default this
	// fraction of its memory (WorkerMemoryBytes), DefaultCacheBytes at
	// least: 64 MiB of a default worker's 384, so that the fields a
	// question reads of 100,000 memories (18 MB for three of them, with
	// where each line is) stay decoded for the next (issue 40), and a
	// query keeps most of the heap a worker is held to (the collector's
	// soft limit, half of its memory less an arena: 128 MiB). A query
	// that decodes whole records of a file too large to keep first
	// empties the cache (see extractworker.Engine.Run).
	workerCacheShare      = 6
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

// workerCacheBytes returns the FileCache budget of a worker that may use
// memory bytes, when none is set (see workerCacheShare).
func workerCacheBytes(memory uint64) int64 {
	return max(DefaultCacheBytes, int64(memory/workerCacheShare))
}

// sandbox returns the jqsandbox limits of a query.
func (l Limits) sandbox() jqsandbox.Limits {
	return jqsandbox.Limits{Timeout: l.Timeout, MaxQueryBytes: l.MaxQueryBytes, MaxInputBytes: l.MaxFileBytes, MaxHeapBytes: l.MaxHeapBytes}
}

// pool returns the configuration of the worker pool these limits use.
func (l Limits) pool() extractworker.Config {
	c := extractworker.Config{Workers: l.Workers, MaxWorkers: l.MaxWorkers, MemoryBytes: l.WorkerMemoryBytes, CacheBytes: l.CacheBytes, Executable: l.WorkerPath}
	if c.CacheBytes == 0 {
		c.CacheBytes = workerCacheBytes(l.WorkerMemoryBytes)
	}
	if c.Executable == "" {
		c.Executable, c.Fallbacks = workerProgram()
	}
	return c
}
