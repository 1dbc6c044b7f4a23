package blobfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/blobfs"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// meter returns a MeterProvider and the reader of what it records.
func meter(t testing.TB) (lro.Option, *sdkmetric.ManualReader) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	return lro.WithMeterProvider(mp), r
}

// counts collects the reader's counters, by name and attribute values,
// and the counts of its histograms, by the same and " count".
func counts(t testing.TB, r *sdkmetric.ManualReader) map[string]int64 {
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]int64{}
	key := func(name string, attrs attribute.Set) string {
		for _, kv := range attrs.ToSlice() {
			name += " " + kv.Value.Emit()
		}
		return name
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)+" count"] += int64(p.Count)
				}
			}
		}
	}
	return out
}

// internals are what the model must never see of a store: its endpoint's
// host, the SDK's operation and request syntax.
func assertNoInternals(t *testing.T, s3 *fakeS3, text string) {
	t.Helper()
	host := strings.TrimPrefix(s3.srv.URL, "http://")
	for _, leak := range []string{host, "127.0.0.1", "endpoint", "x-id=", "PutObject", "GetObject", "http://", "operation error"} {
		assert.NotContains(t, text, leak, "the model sees no internals of the store")
	}
}

// Issue 26.3: the fallback warning of a store that is down tells the
// model, in plain words, that the store could not be written and to call
// again later; the SDK's error, with the endpoint, goes to the event and
// the log.
func TestStoreErrorWarningIsPlain(t *testing.T) {
	s3 := startS3(t)
	var ev events
	var logs bytes.Buffer
	mp, reader := meter(t)
	o := offloader(t, s3.url("lro")+tryOnce(), 3600, &ev, lro.WithoutJanitor(), mp, lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	s3.down.Store(true) // connections closed unanswered
	out := offload(t, o, 300)
	require.Equal(t, lro.Truncated, out.Action)
	assertNoInternals(t, s3, out.Warning)
	assert.Contains(t, out.Warning, "the file store could not be reached")
	assert.Contains(t, out.Warning, "call the tool again later")
	assert.Contains(t, out.Warning, "truncated to")
	host := strings.TrimPrefix(s3.srv.URL, "http://")
	assert.ErrorContains(t, out.Err, host, "the event keeps the whole error")
	assert.Contains(t, logs.String(), host, "and so does the log")
	// The outage is counted once, by the request that met it; its kind is
	// the SDK's: the closed connection, or, when the SDK's retries of it
	// (LRO_TEST_FULL: see tryOnce) outlast the request's deadline, a
	// timeout. The calls after it fail
	// at once, uncounted.
	c := counts(t, reader)
	var outage int64
	for k, n := range c {
		if strings.HasPrefix(k, "lro.store.errors offload ") {
			outage += n
		}
	}
	assert.EqualValues(t, 1, outage, "%v", c)

	s3 = startS3(t)
	o = offloader(t, s3.url("lro"), 3600, nil, lro.WithoutJanitor(), mp)
	s3.deny.Store(true)
	out = offload(t, o, 300)
	assert.Contains(t, out.Warning, "the file store refused access")
	assert.EqualValues(t, 1, counts(t, reader)["lro.store.errors offload permission"])
	assertNoInternals(t, s3, out.Warning)
}

// Issue 26.3 and 26.4: lro_extract and resources/read on a replica that
// did not write the file and holds no copy of it, while the store is
// down, tell the model no internals, count as store_error (not refused),
// and log once per burst.
func TestStoreReadErrorsArePlainCountedAndLogged(t *testing.T) {
	s3 := startS3(t)
	u := s3.url("lro") + tryOnce()
	a := offloader(t, u, 3600, nil, lro.WithoutJanitor())
	mp, reader := meter(t)
	var logs bytes.Buffer
	b := offloader(t, u, 3600, nil, lro.WithoutJanitor(), mp, lro.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	d := offload(t, a, 300).Response
	require.NotNil(t, d)
	name := d.FilePath[strings.LastIndexByte(d.FilePath, '/')+1:]

	// A bad query is refused, as before (of another file: a query of d
	// would leave a copy of it, which answers while the store is down).
	_, err := b.Extract(context.Background(), map[string]any{"file_path": offload(t, a, 300).Response.FilePath, "query": "select("})
	require.Error(t, err)

	s3.down.Store(true)
	for range 3 {
		_, err := b.Extract(context.Background(), map[string]any{"file_path": d.FilePath, "recipe": 1})
		require.Error(t, err)
		assertNoInternals(t, s3, err.Error())
		assert.Contains(t, err.Error(), "the file store could not be reached; try again later")
		_, err = b.Host().ReadResource(context.Background(), "lro://files/"+name)
		require.Error(t, err)
		assertNoInternals(t, s3, err.Error())
		assert.NotErrorIs(t, err, lro.ErrResourceNotFound, "the file is not gone: the store is down")
	}
	c := counts(t, reader)
	assert.EqualValues(t, 3, c["lro.extract.calls store_error"], "%v", c)
	assert.EqualValues(t, 1, c["lro.extract.calls refused"], "only the bad query: %v", c)
	// The first call found the store down (issue 32.3): the others did
	// not ask it, and are counted as calls, not as the store's errors.
	assert.EqualValues(t, 1, c["lro.store.errors lro_extract unavailable"], "%v", c)
	assert.Zero(t, c["lro.store.errors resources/read unavailable"], "%v", c)
	assert.EqualValues(t, 1, c["lro.store.state_changes down"], "%v", c)
	assert.Equal(t, 1, strings.Count(logs.String(), "the file store failed"), "once per burst:\n%s", logs.String())
	assert.Equal(t, 1, strings.Count(logs.String(), "the file store is down"), "once per outage:\n%s", logs.String())
	assert.Contains(t, logs.String(), strings.TrimPrefix(s3.srv.URL, "http://"), "the log has the store's own error")

	// The janitor's listing error is counted, on a replica that has not
	// found the store down yet.
	mp, reader = meter(t)
	c2 := offloader(t, u, 3600, nil, lro.WithoutJanitor(), mp)
	_, err = c2.Sweep(context.Background())
	require.Error(t, err)
	assert.EqualValues(t, 1, counts(t, reader)["lro.store.errors janitor unavailable"])
}

// Issue 26.4: a wrong secret is a permission error, not an unknown one.
func TestStoreWrongSecretIsPermission(t *testing.T) {
	s3 := startS3(t)
	if s3.real {
		// The real server's own answer to a wrong secret.
		t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-"+os.Getenv("AWS_SECRET_ACCESS_KEY"))
	} else {
		s3.badSignature.Store(true)
	}
	f, err := blobfs.Open(context.Background(), s3.url("lro"))
	require.NoError(t, err)
	defer f.Close()
	w, err := f.Create(".a.tmp")
	require.NoError(t, err)
	w.Write([]byte("x"))
	w.Close()
	err = f.Rename(".a.tmp", "a.jsonl")
	assert.ErrorIs(t, err, fs.ErrPermission, "%v", err)
	_, err = f.ReadDir()
	assert.ErrorIs(t, err, fs.ErrPermission, "%v", err)
}

// Issue 26.2: a store that hangs holds a read no longer than its bound,
// and the model is told the store did not answer in time.
func TestStoreHangBoundsReads(t *testing.T) {
	s3 := startS3(t)
	u := s3.url("lro") + "&timeout=300ms"
	a := offloader(t, u, 3600, nil, lro.WithoutJanitor())
	b := offloader(t, u, 3600, nil, lro.WithoutJanitor())
	d := offload(t, a, 300).Response
	require.NotNil(t, d)
	s3.hang.Store(true)
	start := time.Now()
	_, err := b.Extract(context.Background(), map[string]any{"file_path": d.FilePath, "recipe": 1})
	require.Error(t, err)
	testenv.Within(t, time.Since(start), 3*time.Second, "a read of a hanging store")
	assert.Contains(t, err.Error(), "did not answer in time")
	assertNoInternals(t, s3, err.Error())
}

// Issue 26.2: with no timeout in the URL, a store that accepts the
// connection and never answers costs an offload DefaultTimeout (and the
// time of its bytes at DefaultMinThroughput), not minutes: the result
// falls back.
func TestStoreHangDefaultBound(t *testing.T) {
	testenv.SkipUnlessFull(t) // waits DefaultTimeout; TestStoreTimeoutFallsBack proves the bound with a short one
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer l.Close()
	go func() { // accept, read, never answer
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	o := offloader(t, "s3://replicas/lro?region=us-east-1&use_path_style=true&endpoint=http://"+l.Addr().String(), 3600, nil, lro.WithoutJanitor())
	start := time.Now()
	out := offload(t, o, 300)
	took := time.Since(start)
	assert.Equal(t, lro.Truncated, out.Action)
	assert.ErrorIs(t, out.Err, os.ErrDeadlineExceeded, "%v", out.Err)
	assert.Contains(t, out.Warning, "did not answer in time")
	assert.GreaterOrEqual(t, took, blobfs.DefaultTimeout-time.Second)
	testenv.Within(t, took, blobfs.DefaultTimeout+2*time.Second, "the documented bound")
}

// Issue 26.6: two replicas removing the same objects at once: exactly one
// removal of each succeeds, the other is fs.ErrNotExist, so that
// lro.files.removed summed over replicas counts each file once.
func TestJanitorsRemoveOnceAcrossReplicas(t *testing.T) {
	s3 := startS3(t)
	ctx := context.Background()
	var fss [2]*blobfs.FS
	for i := range fss {
		f, err := blobfs.Open(ctx, s3.url("lro"))
		require.NoError(t, err)
		defer f.Close()
		fss[i] = f
	}
	const n = 20
	for i := range n {
		write(t, fss[0], ".t.tmp", "data")
		require.NoError(t, fss[0].Rename(".t.tmp", fmt.Sprintf("f%02d.jsonl", i)))
	}
	var ok, gone atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		for _, f := range fss {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch err := f.Remove(fmt.Sprintf("f%02d.jsonl", i)); {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, fs.ErrNotExist):
					gone.Add(1)
				default:
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	assert.EqualValues(t, n, ok.Load(), "each object removed once")
	assert.EqualValues(t, n, gone.Load())
	assert.Empty(t, names(t, fss[1]))
}
