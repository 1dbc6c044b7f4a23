package lro_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/benchdata"
	"github.com/mcplro/lro/internal/jsonscan"
)

// jsonlBytes is what an offload of recs writes, header aside.
func jsonlBytes(recs []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"lro_header","operation":"recall","query":null,"count":0,"schema_version":"1.0","timestamp":"2026-01-01T00:00:00.000Z","estimated_tokens":0,"detail":"full"}` + "\n")
	for _, r := range recs {
		b.Write(r)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func benchDir(b *testing.B) string { return benchdata.Dir(b) }

// BenchmarkOffload compares a full offload (estimate, write to a private
// temporary file, publish, build the descriptor) with its floor: the two
// things no offload can skip, estimating the set with the library's own
// estimator and writing the same bytes with one os.WriteFile. (The floor
// once counted runes with utf8.RuneCount, seven times slower than the
// estimator: most of its time was a cost the library does not pay, which
// flattered the ratio.) Both remove their file each iteration so the
// directory stays small. The records come from json.Marshal
// (ResultSet.Validated); lro-checking-records has Offload check each of
// them too, against the same floor.
//
//	LRO_BENCH_DIR=/dev/shm go test -run '^$' -bench 'Offload|Estimate' -benchmem
func BenchmarkOffload(b *testing.B) {
	for _, n := range []int{200, 10000} {
		recs := memories(b, n, lro.DetailFull)
		data := jsonlBytes(recs)
		for _, validated := range []bool{true, false} {
			name := "lro"
			if !validated {
				name = "lro-checking-records"
			}
			b.Run(fmt.Sprintf("records=%d/%s", n, name), func(b *testing.B) {
				dir := benchDir(b)
				o := newOffloader(b, func(c *lro.Config) { c.OutputDir = dir }, lro.WithoutJanitor())
				set := lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: recs, Validated: validated}
				b.SetBytes(int64(len(data)))
				benchOffload(b, o, set)
			})
		}
		b.Run(fmt.Sprintf("records=%d/floor", n), func(b *testing.B) {
			floor := offloadFloor(b, data)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				floor()
			}
		})
		// pair runs the floor, the offload and the checking offload in
		// turn in every iteration and reports the median of each one's
		// times and the ratios of the medians, so that all three see the
		// same load on a shared machine, where separate runs a few seconds
		// apart differ by half, and a preempted iteration does not count
		// (the ratios of the fastest iterations, -min, are the cost with
		// no load at all). It also times the floor with every record
		// validated by the library's validator (jsonscan.Valid), the part
		// of checking no offload that checks can skip: checking/valid-floor
		// is what the checking offload costs beyond it.
		b.Run(fmt.Sprintf("records=%d/pair", n), func(b *testing.B) {
			floor := offloadFloor(b, data)
			dir := benchDir(b)
			o := newOffloader(b, func(c *lro.Config) { c.OutputDir = dir }, lro.WithoutJanitor())
			set := lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: recs, Validated: true}
			checking := set
			checking.Validated = false
			var t [4][]time.Duration // floor, lro, checking, valid-floor
			timed := func(k int, f func()) {
				start := time.Now()
				f()
				t[k] = append(t[k], time.Since(start))
			}
			b.SetBytes(4 * int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				timed(0, floor)
				timed(1, func() { offloadOnce(b, o, set) })
				timed(2, func() { offloadOnce(b, o, checking) })
				timed(3, func() {
					for _, r := range recs {
						if !jsonscan.Valid(r) {
							b.Fatal("invalid record")
						}
					}
					floor()
				})
			}
			var med, low [4]float64
			for k := range t {
				slices.Sort(t[k])
				med[k], low[k] = float64(t[k][len(t[k])/2]), float64(t[k][0])
			}
			b.ReportMetric(med[0], "floor-ns/op")
			b.ReportMetric(med[1], "lro-ns/op")
			b.ReportMetric(med[2], "checking-ns/op")
			b.ReportMetric(med[1]/med[0], "lro/floor")
			b.ReportMetric(med[2]/med[0], "checking/floor")
			b.ReportMetric(med[2]/med[3], "checking/valid-floor")
			b.ReportMetric(low[1]/low[0], "lro/floor-min")
			b.ReportMetric(low[2]/low[0], "checking/floor-min")
		})
	}
}

// offloadFloor returns BenchmarkOffload's floor over data: estimating it
// with the library's estimator and writing it with one os.WriteFile.
func offloadFloor(b *testing.B, data []byte) func() {
	path := filepath.Join(benchDir(b), "floor.jsonl")
	var est lro.HeuristicEstimator
	return func() {
		if est.EstimateTokens(data) == 0 {
			b.Fatal("no tokens")
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			b.Fatal(err)
		}
	}
}

// benchOffload offloads set in a benchmark loop, removing each file.
func benchOffload(b *testing.B, o *lro.Offloader, set lro.ResultSet) {
	b.ReportAllocs()
	for b.Loop() {
		offloadOnce(b, o, set)
	}
}

// offloadOnce offloads set and removes its file.
func offloadOnce(b *testing.B, o *lro.Offloader, set lro.ResultSet) {
	out, err := o.Offload(ctx, set)
	if err != nil || out.Action != lro.Offloaded {
		b.Fatal(err, out.Warning)
	}
	if err := os.Remove(out.Response.FilePath); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEstimate compares the script-aware estimator with
// utf8.RuneCount over the same bytes (10,000 full memories), and with
// itself called on each record, as an offload estimates a set: a record's
// tail, shorter than a word, is where per-record calls lose.
func BenchmarkEstimate(b *testing.B) {
	recs := memories(b, 10000, lro.DetailFull)
	data := jsonlBytes(recs)
	var est lro.HeuristicEstimator
	b.Run("heuristic", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if est.EstimateTokens(data) == 0 {
				b.Fatal("zero")
			}
		}
	})
	b.Run("heuristic-each-record", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for _, r := range recs {
				n += est.EstimateTokens(r)
			}
			if n == 0 {
				b.Fatal("zero")
			}
		}
	})
	b.Run("runecount", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if utf8.RuneCount(data) == 0 {
				b.Fatal("zero")
			}
		}
	})
}
