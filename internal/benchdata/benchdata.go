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

// Floor is what an offload of a recall payload is compared with: decoding
// the same text once into its n records and writing the same bytes with
// os.WriteFile.
func Floor(b *testing.B, payload []byte, n int) func() {
	path := filepath.Join(Dir(b), "floor.jsonl")
	return func() {
		var v struct {
			Results []json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal(payload, &v); err != nil || len(v.Results) != n {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, payload, 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			b.Fatal(err)
		}
	}
}
