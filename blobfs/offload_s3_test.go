package blobfs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/blobfs"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// events collects an Offloader's events.
type events struct {
	mu       sync.Mutex
	failed   []lro.WriteFailedEvent
	expired  []lro.FileExpiredEvent
	offloads []lro.OffloadEvent
}

func (e *events) hooks() lro.Hooks {
	return lro.Hooks{
		OnOffload:     func(ev lro.OffloadEvent) { e.mu.Lock(); e.offloads = append(e.offloads, ev); e.mu.Unlock() },
		OnWriteFailed: func(ev lro.WriteFailedEvent) { e.mu.Lock(); e.failed = append(e.failed, ev); e.mu.Unlock() },
		OnFileExpired: func(ev lro.FileExpiredEvent) { e.mu.Lock(); e.expired = append(e.expired, ev); e.mu.Unlock() },
	}
}

func (e *events) counts() (offloads, failed, expired int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.offloads), len(e.failed), len(e.expired)
}

// records returns n memory-like records, about 200 bytes each.
func records(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"id":"m%05d","namespace":"_semantic","title":"memory number %d about deployment","content":"%s","confidence":0.%d}`, i, i, strings.Repeat("x", 100), i%10))
	}
	return out
}

// offloader returns an Offloader of name on the store URL u.
func offloader(t testing.TB, u string, ttl int64, ev *events, opts ...lro.Option) *lro.Offloader {
	t.Helper()
	cfg := lro.DefaultConfig()
	cfg.OutputDir = u
	cfg.TTLSeconds = ttl
	if ev == nil {
		ev = &events{}
	}
	o, err := lro.New(cfg, append([]lro.Option{lro.WithName("replicated"), lro.WithHooks(ev.hooks())}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { o.Close() })
	return o
}

func offload(t testing.TB, o *lro.Offloader, n int) lro.Outcome {
	t.Helper()
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: records(n)})
	require.NoError(t, err)
	return out
}

// An offload on one Offloader is read by another on the same bucket, by
// lro_extract and by resources/read, and its descriptor points there.
func TestOffloadSharedThroughS3(t *testing.T) {
	s3 := startS3(t)
	u := s3.url("team/lro")
	a := offloader(t, u, 3600, nil)
	b := offloader(t, u, 3600, nil)

	out := offload(t, a, 300)
	require.Equal(t, lro.Offloaded, out.Action, "%v", out.Err)
	d := out.Response
	assert.Regexp(t, `^`+regexp.QuoteMeta(s3.loc("team/lro"))+`/atlatl-recall-[0-9A-Z]{26}\.jsonl$`, d.FilePath)
	assert.NotContains(t, d.FilePath, "endpoint", "the query stays out of what the model sees")
	assert.Contains(t, d.Guidance, "lro_extract", "native guidance: no shell reaches a bucket")
	assert.Len(t, d.JQRecipes, 10, "jq_recipes stay, as the specification requires")

	text, err := b.Extract(context.Background(), map[string]any{"file_path": d.FilePath, "query": "select(.id == \"m00042\") | .title"})
	require.NoError(t, err)
	assert.Contains(t, text, "memory number 42 about deployment")

	name := d.FilePath[strings.LastIndexByte(d.FilePath, '/')+1:]
	rc, err := b.Host().ReadResource(context.Background(), "lro://files/"+name+"/lines/2-3")
	require.NoError(t, err)
	assert.Contains(t, rc.Text, `"id":"m00000"`)
	assert.Contains(t, rc.Text, `"id":"m00001"`)
	assert.NotContains(t, rc.Text, `"id":"m00002"`)
}

// Confinement holds on a store: another prefix, another bucket, a name of
// another pattern or another offloader's name are refused before any read.
func TestExtractConfinedOnS3(t *testing.T) {
	s3 := startS3(t)
	a := offloader(t, s3.url("lro"), 3600, nil)
	other := offloader(t, s3.url("other"), 3600, nil)
	d := offload(t, a, 300).Response
	require.NotNil(t, d)
	name := d.FilePath[strings.LastIndexByte(d.FilePath, '/')+1:]

	for _, path := range []string{
		s3.loc("other/") + name, // another prefix
		strings.Replace(s3.loc("lro/"), s3.bucket, "elsewhere", 1) + name, // another bucket
		s3.loc("lro/../other/") + name,
		s3.loc("lro/not-ours.jsonl"),
		"/tmp/" + name,
		"relative/" + name,
	} {
		_, err := a.Extract(context.Background(), map[string]any{"file_path": path, "recipe": 1})
		assert.Error(t, err, path)
	}
	_, err := other.Extract(context.Background(), map[string]any{"file_path": d.FilePath, "recipe": 1})
	assert.ErrorContains(t, err, "not in the offload directory")

	stranger, err := lro.New(lro.Config{OutputDir: s3.url("lro")}, lro.WithName("stranger"), lro.WithoutJanitor())
	require.NoError(t, err)
	defer stranger.Close()
	_, err = stranger.Extract(context.Background(), map[string]any{"file_path": d.FilePath, "recipe": 1})
	assert.ErrorContains(t, err, "another server")
	_, err = stranger.Host().ReadResource(context.Background(), "lro://files/"+name)
	assert.ErrorIs(t, err, lro.ErrResourceNotFound)
}

// The expiry recorded in an object holds for every replica: one with a
// shorter TTL does not delete a file written with a longer one, and two
// sweeping the same expired file both succeed.
func TestJanitorsShareTheBucket(t *testing.T) {
	t.Parallel() // it mostly waits for the expiry
	s3 := startS3(t)
	u := s3.url("lro")
	var evLong, evShort, evShort2 events
	long := offloader(t, u, 3600, &evLong)
	short := offloader(t, u, 1, &evShort, lro.WithoutJanitor())
	short2 := offloader(t, u, 1, &evShort2, lro.WithoutJanitor())

	keep := offload(t, long, 300).Response.FilePath
	gone := offload(t, short, 300).Response.FilePath
	f, err := blobfs.Open(context.Background(), u)
	require.NoError(t, err)
	defer f.Close()
	sleepPastExpiry(t, f, gone[strings.LastIndexByte(gone, '/')+1:])

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, o := range []*lro.Offloader{short, short2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = o.Sweep(context.Background())
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])

	_, err = f.Open(gone[strings.LastIndexByte(gone, '/')+1:])
	assert.ErrorIs(t, err, fs.ErrNotExist, "the expired file is gone")
	r, err := f.Open(keep[strings.LastIndexByte(keep, '/')+1:])
	require.NoError(t, err, "the file written with a one-hour TTL stays")
	r.Close()
	_, _, e1 := evShort.counts()
	_, _, e2 := evShort2.counts()
	assert.Equal(t, 1, e1+e2, "the deletion was reported once across replicas")
}

// sleepPastExpiry sleeps until the expiry recorded in the object name (its
// ModTime: see lro.FS Chtimes) has passed. The engine stamps a TTL of 1 s
// rounded up to the second: 1-2 s after the offload.
func sleepPastExpiry(t *testing.T, f *blobfs.FS, name string) {
	t.Helper()
	info, err := f.Stat(name)
	require.NoError(t, err)
	time.Sleep(time.Until(info.ModTime()) + 50*time.Millisecond)
}

// A store that is down, or denies access, gives the truncated fallback
// with its warning and event: never a failed call.
func TestStoreFailureFallsBack(t *testing.T) {
	s3 := startS3(t)
	var ev events
	o := offloader(t, s3.url("lro")+tryOnce(), 3600, &ev, lro.WithoutJanitor())
	require.Equal(t, lro.Offloaded, offload(t, o, 300).Action)

	s3.deny.Store(true)
	out := offload(t, o, 300)
	assert.Equal(t, lro.Truncated, out.Action)
	assert.NotEmpty(t, out.Warning)
	assert.ErrorIs(t, out.Err, fs.ErrPermission, "%v", out.Err)
	_, failed, _ := ev.counts()
	assert.Equal(t, 1, failed)

	s3.deny.Store(false)
	s3.down.Store(true)
	start := time.Now()
	out = offload(t, o, 300)
	assert.Equal(t, lro.Truncated, out.Action)
	assert.Contains(t, out.Warning, "truncated")
	assert.Error(t, out.Err)
	testenv.Within(t, time.Since(start), 30*time.Second, "an offload to a store that is down")
	_, failed, _ = ev.counts()
	assert.Equal(t, 2, failed)
}

// Rename's upload only creates: a name taken in the store is fs.ErrExist.
func TestCreateOnlyOnS3(t *testing.T) {
	s3 := startS3(t)
	ctx := context.Background()
	f, err := blobfs.Open(ctx, s3.url("lro"))
	require.NoError(t, err)
	defer f.Close()
	write(t, f, ".a.tmp", "first")
	require.NoError(t, f.Rename(".a.tmp", "a.jsonl"))
	write(t, f, ".b.tmp", "second")
	assert.ErrorIs(t, f.Rename(".b.tmp", "a.jsonl"), fs.ErrExist)
	assert.Equal(t, "first", read(t, f, "a.jsonl"))
	assert.Equal(t, s3.loc("lro/a.jsonl"), f.Path("a.jsonl"))
}

// A store that does not answer holds an offload no longer than the
// URL's timeout: the result falls back instead.
func TestStoreTimeoutFallsBack(t *testing.T) {
	s3 := startS3(t)
	var ev events
	o := offloader(t, s3.url("lro")+"&timeout=300ms", 3600, &ev, lro.WithoutJanitor())
	s3.hang.Store(true)
	start := time.Now()
	out := offload(t, o, 300)
	assert.Equal(t, lro.Truncated, out.Action)
	assert.ErrorContains(t, out.Err, "deadline")
	testenv.Within(t, time.Since(start), 5*time.Second, "an offload to a hanging store")
	_, failed, _ := ev.counts()
	assert.Equal(t, 1, failed)
}
