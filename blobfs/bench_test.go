package blobfs_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/blobfs"
	"gocloud.dev/blob"
)

// BenchmarkOffloadS3 compares an offload to the store (buffer, upload
// with its condition and metadata, descriptor) with a plain PUT of the
// same bytes through the same client, in the same run:
//
//	go test ./blobfs -run '^$' -bench OffloadS3 -count 5
func BenchmarkOffloadS3(b *testing.B) {
	s3 := startS3(b)
	u := s3.url("bench")
	ctx := context.Background()
	for _, n := range []int{1000, 10000} {
		recs := records(n)
		cfg := lro.Config{OutputDir: u, MaxDirBytes: -1} // no quota: objects are removed between runs
		off, err := lro.New(cfg, lro.WithName("bench"), lro.WithoutJanitor())
		if err != nil {
			b.Fatal(err)
		}
		store, err := blobfs.Open(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		bucket, err := blob.OpenBucket(ctx, strings.Replace(u, "/bench?", "?", 1))
		if err != nil {
			b.Fatal(err)
		}
		// The bytes of one offloaded file, for the plain PUT.
		out, err := off.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
		if err != nil || out.Action != lro.Offloaded {
			b.Fatalf("%v %v", err, out.Err)
		}
		name := out.Response.FilePath[strings.LastIndexByte(out.Response.FilePath, '/')+1:]
		data := readAll(b, store, name)

		b.Run(fmt.Sprintf("records=%d/offload", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for range b.N {
				out, err := off.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
				if err != nil || out.Action != lro.Offloaded {
					b.Fatalf("%v %v", err, out.Err)
				}
				b.StopTimer()
				p := out.Response.FilePath
				if err := store.Remove(p[strings.LastIndexByte(p, '/')+1:]); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
		b.Run(fmt.Sprintf("records=%d/put", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := range b.N {
				key := fmt.Sprintf("bench/plain-%d.jsonl", i)
				if err := bucket.Upload(ctx, key, bytes.NewReader(data), &blob.WriterOptions{ContentType: "application/jsonl"}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := bucket.Delete(ctx, key); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
		off.Close()
		store.Close()
		bucket.Close()
	}
}

func readAll(b *testing.B, f *blobfs.FS, name string) []byte {
	b.Helper()
	r, err := f.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
