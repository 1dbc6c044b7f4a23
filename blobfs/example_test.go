package blobfs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/blobfs"
	"gocloud.dev/blob/memblob"
)

// Offloaded files kept in a bucket: here gocloud's in-memory driver, in
// production an s3:// output_dir. The descriptor points to lro_extract,
// since no shell reaches a bucket, and any Offloader on the same bucket
// and name can follow it.
func Example() {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	store, err := blobfs.New(bucket, "lro/", blobfs.WithLocation("mem://results/lro"))
	if err != nil {
		panic(err)
	}
	off, err := lro.New(lro.DefaultConfig(), lro.WithFS(store), lro.WithName("example"), lro.WithoutJanitor())
	if err != nil {
		panic(err)
	}
	defer off.Close()

	records := make([]json.RawMessage, 400)
	for i := range records {
		records[i] = json.RawMessage(fmt.Sprintf(`{"id":"m%d","namespace":"_semantic","title":"note %d on the deployment runbook"}`, i, i))
	}
	out, err := off.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: records})
	if err != nil {
		panic(err)
	}
	path := out.Response.FilePath
	fmt.Println(out.Action, strings.HasPrefix(path, "mem://results/lro/atlatl-recall-"))
	fmt.Println(strings.Contains(out.Response.Guidance, "lro_extract"))

	// Another replica: a second Offloader of the same name on the bucket.
	replica, err := lro.New(lro.DefaultConfig(), lro.WithFS(must(blobfs.New(bucket, "lro/", blobfs.WithLocation("mem://results/lro")))), lro.WithName("example"), lro.WithoutJanitor())
	if err != nil {
		panic(err)
	}
	defer replica.Close()
	text, err := replica.Extract(context.Background(), map[string]any{"file_path": path, "query": `select(.id == "m7") | .title`})
	if err != nil {
		panic(err)
	}
	fmt.Print(text)
	// Output:
	// offloaded true
	// true
	// "note 7 on the deployment runbook"
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
