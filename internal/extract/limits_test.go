package extract

import (
	"fmt"
	"testing"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/stretchr/testify/assert"
)

// TestExtractMemoryBudget: whatever the fields, the admitted calls and
// every worker that may run, each with its footprint and limit, fit the
// budget; the defaults give two workers of 384 MiB under 1 GiB.
func TestExtractMemoryBudget(t *testing.T) {
	def := Limits{}.withDefaults()
	assert.Equal(t, uint64(DefaultMemoryBudget), def.MemoryBudget)
	assert.Equal(t, 2, def.Workers)
	assert.Equal(t, 2, def.MaxWorkers)
	assert.Equal(t, uint64(384<<20), def.WorkerMemoryBytes)
	assert.Equal(t, int64(192<<20), def.MaxCallBytes)

	for _, l := range []Limits{
		{},
		{WorkerMemoryBytes: 992 << 20}, // the old default: one worker
		{Workers: 8},                   // more than the budget holds
		{MaxWorkers: 16, WorkerMemoryBytes: 1 << 20}, // tiny workers: at least 64 MiB each
		{MemoryBudget: 512 << 20},
		{MemoryBudget: 4 << 30, Workers: 3},
		{MemoryBudget: 1 << 20}, // below the least: 192 MiB
		{MemoryBudget: 1 << 30, MaxCallBytes: 900 << 20},
	} {
		t.Run(fmt.Sprintf("%+v", l), func(t *testing.T) {
			got := l.withDefaults()
			budget := max(got.MemoryBudget, 192<<20)
			total := uint64(got.MaxCallBytes) + uint64(got.MaxWorkers)*(extractworker.FootprintBytes+got.WorkerMemoryBytes)
			assert.LessOrEqual(t, total, budget, "%+v", got)
			assert.GreaterOrEqual(t, got.MaxWorkers, 1)
			assert.LessOrEqual(t, got.Workers, got.MaxWorkers)
			assert.GreaterOrEqual(t, got.WorkerMemoryBytes, uint64(minWorkerMemory))
			assert.LessOrEqual(t, got.MaxHeapBytes+uint64(got.MaxCallBytes), budget, "in process too")
			if l.WorkerMemoryBytes >= minWorkerMemory && uint64(got.MaxCallBytes)+extractworker.FootprintBytes+l.WorkerMemoryBytes <= budget {
				assert.Equal(t, l.WorkerMemoryBytes, got.WorkerMemoryBytes, "kept when a worker of it fits")
			}
		})
	}
	one := Limits{WorkerMemoryBytes: 992 << 20}.withDefaults()
	assert.Equal(t, 1, one.MaxWorkers)
	assert.Equal(t, uint64(1<<30-192<<20-32<<20), one.WorkerMemoryBytes, "what one worker can have")
	big := Limits{MemoryBudget: 4 << 30, Workers: 3}.withDefaults()
	assert.Equal(t, 6, big.MaxWorkers, "twice Workers")
	assert.Greater(t, big.WorkerMemoryBytes, uint64(500<<20), "a larger budget, larger workers")
}

// TestWorkerCacheBudget: a worker's FileCache is a sixth of its memory by
// default (64 MiB of 384: the fields a question reads of 100,000
// memories, 18 MB, fit its half for one file), 32 MiB at least, and what
// CacheBytes says when set (negative: none).
func TestWorkerCacheBudget(t *testing.T) {
	assert.Equal(t, int64(64<<20), Limits{}.withDefaults().pool().CacheBytes)
	assert.Equal(t, int64(DefaultCacheBytes), Limits{WorkerMemoryBytes: 64 << 20}.withDefaults().pool().CacheBytes)
	assert.Equal(t, int64(8<<20), Limits{CacheBytes: 8 << 20}.withDefaults().pool().CacheBytes)
	assert.Equal(t, int64(-1), Limits{CacheBytes: -1}.withDefaults().pool().CacheBytes)
	big := Limits{MemoryBudget: 4 << 30}.withDefaults()
	assert.Equal(t, int64(big.WorkerMemoryBytes/6), big.pool().CacheBytes)
}
