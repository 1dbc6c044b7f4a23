package blobfs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/blobfs"
	"github.com/mcplro/lro/internal/memstore"
)

// fullMemories returns n generated memories at full detail, one record
// each.
func fullMemories(b *testing.B, n int) []json.RawMessage {
	mems := memstore.Generate(n, 3)
	out := make([]json.RawMessage, n)
	for i := range mems {
		r, err := json.Marshal(&mems[i])
		if err != nil {
			b.Fatal(err)
		}
		out[i] = r
	}
	return out
}

// BenchmarkReplicas measures, in one run, an offload of n full memories
// to the store and to a local directory, and an lro_extract on a replica
// that did not write the file: cold (its first query of the file: the
// local copy, then the worker) and warm (the next one):
//
//	go test ./blobfs -run '^$' -bench Replicas -benchtime 5x
//
// With LRO_TEST_S3_URL set, the store is that server (see s3_test.go).
func BenchmarkReplicas(b *testing.B) {
	s3 := startS3(b)
	ctx := context.Background()
	for _, n := range []int{200, 10000} {
		recs := fullMemories(b, n)
		set := func() lro.ResultSet {
			return lro.ResultSet{Operation: "recall", Detail: lro.DetailFull, Records: recs}
		}
		writer := newBench(b, lro.Config{OutputDir: s3.url(fmt.Sprintf("replicas-%d", n))})
		disk := newBench(b, lro.Config{OutputDir: b.TempDir()})
		for name, o := range map[string]*lro.Offloader{"store": writer, "disk": disk} {
			b.Run(fmt.Sprintf("memories=%d/offload-%s", n, name), func(b *testing.B) {
				for range b.N {
					out, err := o.Offload(ctx, set())
					if err != nil || out.Action != lro.Offloaded {
						b.Fatalf("%v %v", err, out.Err)
					}
				}
			})
		}
		for _, warm := range []bool{false, true} {
			kind := "cold"
			if warm {
				kind = "warm"
			}
			b.Run(fmt.Sprintf("memories=%d/extract-%s", n, kind), func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					out, err := writer.Offload(ctx, set())
					if err != nil || out.Action != lro.Offloaded {
						b.Fatalf("%v %v", err, out.Err)
					}
					reader := newBench(b, lro.Config{OutputDir: s3.url(fmt.Sprintf("replicas-%d", n))})
					args := map[string]any{"file_path": out.Response.FilePath, "recipe": 1}
					if warm {
						if _, err := reader.Extract(ctx, args); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					text, err := reader.Extract(ctx, args)
					b.StopTimer()
					if err != nil || !strings.Contains(text, "\t") {
						b.Fatalf("%v %.200s", err, text)
					}
					reader.Close()
					b.StartTimer()
				}
			})
		}
	}
}

func newBench(b *testing.B, cfg lro.Config) *lro.Offloader {
	cfg.TTLSeconds = 3600
	o, err := lro.New(cfg, lro.WithName("replicas"), lro.WithoutJanitor(), lro.WithoutEnv())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { o.Close() })
	return o
}

// BenchmarkUpload256MiB measures the upload of a file of the engine's
// per-file cap, lro.DefaultMaxFileBytes (256 MiB), through the FS: what
// the default bound on an upload (blobfs.DefaultTimeout plus its bytes at
// DefaultMinThroughput, 26 s) must leave room for.
//
//	go test ./blobfs -run '^$' -bench Upload256MiB -benchtime 3x
func BenchmarkUpload256MiB(b *testing.B) {
	s3 := startS3(b)
	f, err := blobfs.Open(context.Background(), s3.url("big"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	chunk := []byte(strings.Repeat(`{"id":"m","content":"`+strings.Repeat("x", 200)+`"}`+"\n", 4096))
	b.SetBytes(lro.DefaultMaxFileBytes)
	for i := range b.N {
		b.StopTimer()
		w, err := f.Create(".big.tmp")
		if err != nil {
			b.Fatal(err)
		}
		for n := 0; n+len(chunk) <= lro.DefaultMaxFileBytes; n += len(chunk) {
			w.Write(chunk)
		}
		w.Close()
		b.StartTimer()
		start := time.Now()
		if err := f.Rename(".big.tmp", fmt.Sprintf("big-%d.jsonl", i)); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/upload")
		b.StopTimer()
		f.Remove(fmt.Sprintf("big-%d.jsonl", i))
		b.StartTimer()
	}
}
