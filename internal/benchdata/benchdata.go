// Package benchdata holds what the benchmarks of both SDK adapters share:
// the payload they offload, the floor they are compared with, and the
// directory they write to. It is test support, imported by _test files
// only.
package benchdata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/memstore"
)

// Recall returns what recall_memories sends for n full memories:
// {query, count, results: [{score, memory}]}, as JSON.
func Recall(n int) []byte {
	type hit struct {
		Score  float64          `json:"score"`
		Memory *memstore.Memory `json:"memory"`
	}
	mems := memstore.Generate(n, 3)
	hits := make([]hit, n)
	for i := range mems {
		hits[i] = hit{Score: 1 - float64(i)/float64(n), Memory: &mems[i]}
	}
	b, err := json.Marshal(map[string]any{"query": "q", "count": n, "results": hits})
	if err != nil {
		panic(err) // generated memories always marshal
	}
	return b
}

// Dir returns a fresh directory for benchmark files: under $LRO_BENCH_DIR
// when set (for example /dev/shm, to take a noisy disk out of the
// comparison), else under the benchmark's temporary directory.
func Dir(b *testing.B) string {
	root := os.Getenv("LRO_BENCH_DIR")
	if root == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(root, "lro-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Floor is what an offload of a recall payload is compared with: the two
// things no offload can skip, estimating the payload with the library's
// own estimator and writing its bytes with one os.WriteFile. It once
// decoded the payload with encoding/json too, which took four to six
// times as long as the whole offload, so that it bounded nothing.
func Floor(b *testing.B, payload []byte) func() {
	path := filepath.Join(Dir(b), "floor.jsonl")
	var est lro.HeuristicEstimator
	return func() {
		if est.EstimateTokens(payload) == 0 {
			b.Fatal("no tokens")
		}
		if err := os.WriteFile(path, payload, 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			b.Fatal(err)
		}
	}
}
