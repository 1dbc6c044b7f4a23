package lro

import (
	"time"

	"github.com/mcplro/lro/internal/extractworker"
)

// ExtractWorkerPIDs returns the process ids of the workers that run o's
// lro_extract queries, for tests that watch their memory.
func ExtractWorkerPIDs(o *Offloader) []int {
	return extractworker.PoolFor(o.opts.extractLimits.withDefaults().pool()).Stats().PIDs
}

// ExtractLocalCopies returns how many local copies of a store's files o
// keeps for its workers.
func ExtractLocalCopies(o *Offloader) int { return o.copies.count() }

// ExtractWorkersBusy returns how many of the workers that run o's
// lro_extract queries hold one.
func ExtractWorkersBusy(o *Offloader) int {
	return extractworker.PoolFor(o.opts.extractLimits.withDefaults().pool()).Stats().Busy
}

// ExtractWorkersSupported reports whether this platform runs workers.
func ExtractWorkersSupported() bool { return extractworker.Supported() }

// SetCopyFreshFor sets how long a local copy is used without asking the
// FS, until the test ends.
func SetCopyFreshFor(t interface{ Cleanup(func()) }, d time.Duration) {
	prev := copyFreshFor
	copyFreshFor = d
	t.Cleanup(func() { copyFreshFor = prev })
}
