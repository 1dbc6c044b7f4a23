package lro

import "github.com/mcplro/lro/internal/extractworker"

// ExtractWorkerPIDs returns the process ids of the workers that run o's
// lro_extract queries, for tests that watch their memory.
func ExtractWorkerPIDs(o *Offloader) []int {
	return extractworker.PoolFor(o.opts.extractLimits.withDefaults().pool()).Stats().PIDs
}
