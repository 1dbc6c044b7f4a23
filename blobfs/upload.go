package blobfs

import (
	"context"
	"io"
	"time"

	"gocloud.dev/blob"
)

// minPart is the smallest part of a multipart upload to S3 (5 MiB).
const minPart = 5 << 20

// contentType is that of every file: JSON Lines.
const contentType = "application/jsonl"

// upload writes data to key in one request that succeeds only if key
// does not exist yet, with the expiry as metadata when there is one.
func (f *FS) upload(key string, data *chunkReader, expires time.Time) error {
	opts := &blob.WriterOptions{
		ContentType: contentType,
		IfNotExist:  true,
		// One part holds the whole file, so the upload is a single PUT,
		// atomic and create-only wherever the store supports the
		// condition; a multipart upload would take the condition only at
		// its completion, and not on every S3-compatible store.
		BufferSize: int(max(data.size+1, minPart)),
	}
	if !expires.IsZero() {
		opts.Metadata = map[string]string{metaExpires: expires.UTC().Format(time.RFC3339Nano)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.opts.bound(data.size))
	defer cancel()
	if err := f.observe(f.bucket.Upload(ctx, key, io.Reader(data), opts)); err != nil {
		return mapErr(err)
	}
	return nil
}
