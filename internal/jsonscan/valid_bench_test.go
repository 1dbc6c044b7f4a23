package jsonscan_test

import (
	"encoding/json"
	"testing"

	"github.com/mcplro/lro/internal/benchdata"
	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/memstore"
)

// memoryRecords returns n full memories, each as json.Marshal writes it:
// the records an offload checks one by one (about 650 bytes of short
// strings and keys each).
func memoryRecords(b *testing.B, n int) (recs [][]byte, size int64) {
	b.Helper()
	for _, m := range memstore.Generate(n, 42) {
		v, err := memstore.Project(&m, memstore.DetailFull)
		if err != nil {
			b.Fatal(err)
		}
		rec, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, rec)
		size += int64(len(rec))
	}
	return recs, size
}

// BenchmarkValid checks 200 memory records one at a time, as an offload
// of records that are not marked Validated does, with Valid, with
// ValidFacts (what the offload calls) and with encoding/json's Valid; and
// a whole recall result of 2,000 hits with Valid and with ValidIndex, as
// the middleware reads a tool's result.
//
//	go test -run '^$' -bench Valid -benchmem ./internal/jsonscan
func BenchmarkValid(b *testing.B) {
	recs, size := memoryRecords(b, 200)
	each := func(valid func([]byte) bool) func(*testing.B) {
		return func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for _, r := range recs {
					if !valid(r) {
						b.Fatalf("invalid: %s", r)
					}
				}
			}
		}
	}
	b.Run("records/jsonscan", each(jsonscan.Valid))
	b.Run("records/jsonscan-facts", each(func(r []byte) bool {
		f, ok := jsonscan.ValidFacts(r, "namespace")
		return ok && f.Value != nil
	}))
	b.Run("records/encoding-json", each(json.Valid))
	recall := benchdata.Recall(2000)
	b.Run("recall/jsonscan-index", func(b *testing.B) {
		b.SetBytes(int64(len(recall)))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := jsonscan.ValidIndex(recall, "score", "memory"); !ok {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("recall/jsonscan", func(b *testing.B) {
		b.SetBytes(int64(len(recall)))
		b.ReportAllocs()
		for b.Loop() {
			if !jsonscan.Valid(recall) {
				b.Fatal("invalid")
			}
		}
	})
}

// BenchmarkLookup looks up the namespace of 200 memory records, as an
// offload counts them.
func BenchmarkLookup(b *testing.B) {
	recs, size := memoryRecords(b, 200)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range recs {
			if _, ok := jsonscan.Lookup(r, "namespace"); !ok {
				b.Fatal("no namespace")
			}
		}
	}
}
