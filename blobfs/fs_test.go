package blobfs_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"
	"time"

	"github.com/mcplro/lro/blobfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

// newMem returns an FS over an in-memory bucket, under the prefix lro/.
func newMem(t *testing.T, opts ...blobfs.Option) (*blobfs.FS, *blob.Bucket) {
	t.Helper()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	f, err := blobfs.New(b, "lro/", append([]blobfs.Option{blobfs.WithLocation("mem://test/lro")}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f, b
}

func write(t *testing.T, f *blobfs.FS, name, data string) {
	t.Helper()
	w, err := f.Create(name)
	require.NoError(t, err)
	_, err = io.WriteString(w, data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

func names(t *testing.T, f *blobfs.FS) []string {
	t.Helper()
	des, err := f.ReadDir()
	require.NoError(t, err)
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func read(t *testing.T, f *blobfs.FS, name string) string {
	t.Helper()
	r, err := f.Open(name)
	require.NoError(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return string(b)
}

// A file is invisible until Rename, then whole, with the expiry recorded.
func TestPublishWhole(t *testing.T) {
	f, b := newMem(t)
	ctx := context.Background()
	write(t, f, ".a.jsonl.tmp", "header\nrecord\n")
	assert.Empty(t, names(t, f), "nothing reaches the store before Rename")
	_, err := f.Open(".a.jsonl.tmp")
	assert.ErrorIs(t, err, fs.ErrNotExist, "a file being written cannot be read")

	expires := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, f.Chtimes(".a.jsonl.tmp", time.Now(), expires))
	require.NoError(t, f.Rename(".a.jsonl.tmp", "a.jsonl"))
	assert.Equal(t, []string{"a.jsonl"}, names(t, f))
	assert.Equal(t, "header\nrecord\n", read(t, f, "a.jsonl"))

	attrs, err := b.Attributes(ctx, "lro/a.jsonl")
	require.NoError(t, err)
	assert.Equal(t, "application/jsonl", attrs.ContentType)
	assert.Equal(t, "2030-01-02T03:04:05Z", attrs.Metadata["lro-expires"])

	// A second FS (another replica) reads the expiry from the object.
	other, err := blobfs.New(b, "lro/")
	require.NoError(t, err)
	des, err := other.ReadDir()
	require.NoError(t, err)
	require.Len(t, des, 1)
	info, err := des[0].Info()
	require.NoError(t, err)
	assert.True(t, info.ModTime().Equal(expires), "%v", info.ModTime())
	assert.EqualValues(t, len("header\nrecord\n"), info.Size())
	assert.True(t, info.Mode().IsRegular())
	assert.True(t, des[0].Type().IsRegular())

	r, err := other.Open("a.jsonl")
	require.NoError(t, err)
	st, err := r.Stat()
	require.NoError(t, err)
	assert.True(t, st.Mode().IsRegular())
	assert.EqualValues(t, 14, st.Size())
	require.NoError(t, r.Close())
}

// Rename never replaces a name; the buffer stays for Remove.
func TestRenameCreateOnly(t *testing.T) {
	f, _ := newMem(t)
	write(t, f, ".a.tmp", "one")
	require.NoError(t, f.Rename(".a.tmp", "a"))
	write(t, f, ".b.tmp", "two")
	err := f.Rename(".b.tmp", "a")
	require.ErrorIs(t, err, fs.ErrExist)
	assert.Equal(t, "one", read(t, f, "a"))
	require.NoError(t, f.Remove(".b.tmp"), "the buffer is still there to discard")
	assert.ErrorIs(t, f.Rename(".b.tmp", "b"), fs.ErrNotExist)
	assert.Equal(t, []string{"a"}, names(t, f))
}

func TestCreateExclusive(t *testing.T) {
	f, _ := newMem(t)
	_, err := f.Create(".a.tmp")
	require.NoError(t, err)
	_, err = f.Create(".a.tmp")
	assert.ErrorIs(t, err, fs.ErrExist)
}

// An unfinished file (still open, or a write failed) is never published.
func TestIncompleteNotPublished(t *testing.T) {
	f, _ := newMem(t, blobfs.WithMaxObjectBytes(8))
	w, err := f.Create(".open.tmp")
	require.NoError(t, err)
	_, err = io.WriteString(w, "1234")
	require.NoError(t, err)
	assert.Error(t, f.Rename(".open.tmp", "open"), "still open")

	w, err = f.Create(".big.tmp")
	require.NoError(t, err)
	_, err = io.WriteString(w, "123456789")
	require.ErrorIs(t, err, blobfs.ErrTooLarge)
	require.NoError(t, w.Close())
	assert.ErrorIs(t, f.Rename(".big.tmp", "big"), blobfs.ErrTooLarge)
	assert.Empty(t, names(t, f))
}

// Removing what is gone is fs.ErrNotExist, which janitors take as done.
func TestRemoveTwice(t *testing.T) {
	f, b := newMem(t)
	other, err := blobfs.New(b, "lro/")
	require.NoError(t, err)
	write(t, f, ".a.tmp", "x")
	require.NoError(t, f.Rename(".a.tmp", "a"))
	require.NoError(t, other.Remove("a"))
	assert.ErrorIs(t, f.Remove("a"), fs.ErrNotExist)
	_, err = f.Open("a")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// Only plain names under the prefix are seen or reached.
func TestConfined(t *testing.T) {
	f, b := newMem(t)
	ctx := context.Background()
	for _, key := range []string{"outside.jsonl", "lro/sub/deep.jsonl", "lrox.jsonl", "lro/in.jsonl"} {
		require.NoError(t, b.WriteAll(ctx, key, []byte("x"), nil))
	}
	assert.Equal(t, []string{"in.jsonl"}, names(t, f))
	for _, name := range []string{"../outside.jsonl", "sub/deep.jsonl", "", ".", ".."} {
		_, err := f.Open(name)
		assert.ErrorIs(t, err, fs.ErrInvalid, "%q", name)
		assert.ErrorIs(t, f.Remove(name), fs.ErrInvalid, "%q", name)
		_, err = f.Create(name)
		assert.ErrorIs(t, err, fs.ErrInvalid, "%q", name)
	}
	ok, err := b.Exists(ctx, "outside.jsonl")
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestPathAndRemote(t *testing.T) {
	f, _ := newMem(t)
	assert.Equal(t, "mem://test/lro/atlatl-recall-x.jsonl", f.Path("atlatl-recall-x.jsonl"))
	assert.True(t, f.Remote())

	b := memblob.OpenBucket(nil)
	defer b.Close()
	g, err := blobfs.New(b, "p/")
	require.NoError(t, err)
	assert.Equal(t, "blob://p/n", g.Path("n"))
}

func TestNewRefuses(t *testing.T) {
	b := memblob.OpenBucket(nil)
	defer b.Close()
	for _, prefix := range []string{"noslash", "/abs/", "a//b/"} {
		_, err := blobfs.New(b, prefix)
		assert.ErrorContains(t, err, prefix)
	}
	_, err := blobfs.New(nil, "")
	assert.Error(t, err)
}

func TestOpenURLRefuses(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ url, want string }{
		{"s3:///prefix", "want scheme://bucket/prefix"},
		{"s3://b/p?prefix=x", "put the prefix in the path"},
		{"s3://key:secret@b/p", "credentials do not belong"},
		{"s3://b/p?bogus=1", `unknown query parameter "bogus"`},
		{"nosuch://b/p", "nosuch"},
		{"s3://b/p?timeout=soon", "want a positive duration"},
		{"s3://b/p?timeout=-1s", "want a positive duration"},
	} {
		_, err := blobfs.Open(ctx, tc.url)
		require.Error(t, err, tc.url)
		assert.ErrorContains(t, err, tc.want, tc.url)
		assert.NotContains(t, err.Error(), "secret")
	}
}

// After Close, nothing new is written.
func TestClose(t *testing.T) {
	f, _ := newMem(t)
	w, err := f.Create(".a.tmp")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = io.WriteString(w, "x")
	assert.True(t, errors.Is(err, fs.ErrClosed), "%v", err)
	_, err = f.Create(".b.tmp")
	assert.ErrorIs(t, err, fs.ErrClosed)
}

// Files larger than a buffer chunk, written in odd pieces, arrive intact.
func TestLargeFileIntact(t *testing.T) {
	f, _ := newMem(t)
	data := make([]byte, 3<<20+12345)
	for i := range data {
		data[i] = byte(i*7 + i/1000)
	}
	w, err := f.Create(".big.tmp")
	require.NoError(t, err)
	for p, step := data, 1; len(p) > 0; step = step*3%100003 + 1 {
		k := min(step, len(p))
		n, err := w.Write(p[:k])
		require.NoError(t, err)
		require.Equal(t, k, n)
		p = p[k:]
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Rename(".big.tmp", "big"))
	assert.True(t, read(t, f, "big") == string(data), "the object holds the bytes written")
}
