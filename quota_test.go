package lro_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// meterFS wraps an FS and counts, exactly, the bytes its files hold and
// the most they ever held: bytes count from just before they are written
// until just after their file is removed. It can fail the writes of every
// failEvery-th file, half-way, as a full disk would.
type meterFS struct {
	lro.FS
	failEvery int64

	creates atomic.Int64
	mu      sync.Mutex
	sizes   map[string]int64
	now     int64
	peak    int64
}

func newMeterFS(fsys lro.FS) *meterFS { return &meterFS{FS: fsys, sizes: map[string]int64{}} }

func (m *meterFS) grow(name string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sizes[name] += n
	m.now += n
	m.peak = max(m.peak, m.now)
}

func (m *meterFS) Peak() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

func (m *meterFS) Create(name string) (lro.File, error) {
	f, err := m.FS.Create(name)
	if err != nil {
		return nil, err
	}
	fail := m.failEvery > 0 && m.creates.Add(1)%m.failEvery == 0
	return &meterFile{File: f, m: m, name: name, fail: fail}, nil
}

func (m *meterFS) Rename(oldname, newname string) error {
	err := m.FS.Rename(oldname, newname)
	if err == nil {
		m.mu.Lock()
		m.sizes[newname] = m.sizes[oldname]
		delete(m.sizes, oldname)
		m.mu.Unlock()
	}
	return err
}

func (m *meterFS) Remove(name string) error {
	err := m.FS.Remove(name)
	if err == nil {
		m.mu.Lock()
		m.now -= m.sizes[name]
		delete(m.sizes, name)
		m.mu.Unlock()
	}
	return err
}

func (m *meterFS) Chtimes(name string, atime, mtime time.Time) error {
	return m.FS.(interface {
		Chtimes(string, time.Time, time.Time) error
	}).Chtimes(name, atime, mtime)
}

func (m *meterFS) DiskSpace() (avail, total int64, err error) {
	return m.FS.(interface{ DiskSpace() (int64, int64, error) }).DiskSpace()
}

type meterFile struct {
	lro.File
	m    *meterFS
	name string
	fail bool
}

func (f *meterFile) Write(p []byte) (int, error) {
	f.m.grow(f.name, int64(len(p)))
	if f.fail {
		n, _ := f.File.Write(p[:len(p)/2])
		f.m.grow(f.name, int64(n-len(p)))
		return n, &os.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	}
	n, err := f.File.Write(p)
	f.m.grow(f.name, int64(n-len(p)))
	return n, err
}

// evictions collects eviction events.
type evictions struct {
	mu     sync.Mutex
	events []lro.FileEvictedEvent
}

func (e *evictions) add(ev lro.FileEvictedEvent) {
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
}
func (e *evictions) all() []lro.FileEvictedEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]lro.FileEvictedEvent(nil), e.events...)
}

// TestQuotaFlood makes 1,000 offloading calls from 8 goroutines against a
// 5 MB quota, with results from 10 KB to 6 MB and a simulated disk-full
// failure now and then: every call succeeds (a file, or the truncated
// fallback with a warning for what cannot fit or failed), the files never
// hold more than the quota at any moment, and no partial or temporary
// file is left.
func TestQuotaFlood(t *testing.T) {
	const (
		quota   = 5_000_000
		calls   = 1000
		workers = 8
	)
	dir := t.TempDir()
	meter := newMeterFS(lro.DirFS(dir))
	meter.failEvery = 97
	var ev evictions
	var over atomic.Int64 // the tally above the quota, seen from a hook
	var o *lro.Offloader
	o = newOffloader(t, func(c *lro.Config) { c.OutputDir = dir; c.MaxDirBytes = quota },
		lro.WithFS(meter),
		lro.WithHooks(lro.Hooks{
			OnFileEvicted: ev.add,
			OnOffload: func(lro.OffloadEvent) {
				if u := lro.Usage(o); u > quota {
					over.Store(u)
				}
			},
		}))

	// Records of 10 KB each: the sets are 20 KB to 6 MB, cheap to make
	// and to write, so that the test measures the quota, not JSON.
	records := make([]json.RawMessage, 600)
	for i := range records {
		records[i] = json.RawMessage(fmt.Sprintf(`{"id":%d,"body":"%s"}`, i, strings.Repeat("x", 10_000)))
	}
	size := func(i int) int { // records in call i's result
		switch {
		case i%100 == 0:
			return 600 // 6 MB: can never fit
		case i%20 == 0:
			return 100 // 1 MB
		case i%5 == 0:
			return 30
		case i%2 == 0:
			return 8
		}
		return 2
	}

	stop := make(chan struct{})
	var sampler sync.WaitGroup
	samples := 0
	sampler.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			samples++
			assert.LessOrEqual(t, meter.Peak(), int64(quota), "the directory held more than the quota")
		}
	})

	outs := make([]lro.Outcome, calls)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < calls; i = int(next.Add(1)) - 1 {
				set := lro.ResultSet{Operation: "logs", Generic: true, Records: records[:size(i)], Tokens: 1 << 20, Validated: true}
				out, err := o.Offload(ctx, set)
				if !assert.NoError(t, err, "call %d", i) {
					return
				}
				outs[i] = out
			}
		})
	}
	wg.Wait()
	close(stop)
	sampler.Wait()

	offloaded, truncated := 0, 0
	for i, out := range outs {
		switch out.Action {
		case lro.Offloaded:
			offloaded++
			assert.NotEqual(t, 600, size(i), "a 6 MB result cannot fit a 5 MB quota")
		case lro.Truncated:
			truncated++
			assert.Contains(t, out.Warning, "offloading failed")
			if size(i) == 600 {
				assert.ErrorIs(t, out.Err, lro.ErrOverQuota)
				assert.Contains(t, out.Warning, "max_dir_bytes")
			} else {
				assert.ErrorIs(t, out.Err, syscall.ENOSPC, "call %d: only what cannot fit, or failed, falls back: %v", i, out.Err)
			}
		default:
			t.Errorf("call %d: %v", i, out.Action)
		}
	}
	assert.Equal(t, calls, offloaded+truncated)
	assert.Greater(t, truncated, calls/100, "the 6 MB results and the failed writes")

	peak := meter.Peak()
	assert.LessOrEqual(t, peak, int64(quota), "the files never held more than the quota")
	assert.Zero(t, over.Load(), "the tally never passed the quota")
	evicted := ev.all()
	assert.NotEmpty(t, evicted)
	for _, e := range evicted {
		assert.Greater(t, e.Used+e.Need, e.Quota)
		assert.Contains(t, e.Reason, "max_dir_bytes is 5000000")
		assert.Equal(t, dir, filepath.Dir(e.Path))
		assert.Equal(t, dir, filepath.Dir(e.For))
		assert.True(t, e.Expires.After(e.Created))
	}

	// At rest: only complete, published files, no more than the quota,
	// and the tally is exact.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var total int64
	for _, e := range entries {
		require.False(t, strings.HasPrefix(e.Name(), "."), "a temporary file was left: %s", e.Name())
		data := readFile(t, filepath.Join(dir, e.Name()))
		h, lines := readJSONL(t, data)
		assert.Equal(t, h.Count, len(lines), "%s is complete", e.Name())
		total += int64(len(data))
	}
	assert.LessOrEqual(t, total, int64(quota))
	assert.Equal(t, total, lro.Usage(o), "the tally matches the directory")
	assert.Equal(t, offloaded-len(evicted), len(entries), "every file is still there or was evicted")
	t.Logf("%d calls: %d offloaded, %d truncated, %d evicted; peak %d bytes of %d; %d files (%d bytes) left; %d samples",
		calls, offloaded, truncated, len(evicted), peak, quota, len(entries), total, samples)
}

// TestQuotaEvictsFirstToExpire fills a quota of three files with files of
// an earlier process and of this one: the next file evicts the one that
// expires first, with an event that says why, and files of another server
// in the same directory are neither counted nor evicted.
func TestQuotaEvictsFirstToExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := lrotest.NewMemFS("/lro")
		recs := memories(t, 40, lro.DetailFull)
		var size int64
		{ // measure a file of recs
			probe := lrotest.NewMemFS("/probe")
			p := newOffloader(t, nil, lro.WithFS(probe), lro.WithoutJanitor())
			out, err := p.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
			require.NoError(t, err)
			data, err := probe.ReadFile(filepath.Base(out.Response.FilePath))
			require.NoError(t, err)
			size = int64(len(data))
		}
		// An earlier process of this server left a file written an hour
		// ago that lives a day; another server left a large one.
		earlier := nameAt("atlatl", "recall", time.Now().Add(-time.Hour))
		mem.WriteFile(earlier, make([]byte, size))
		require.NoError(t, mem.Chtimes(earlier, time.Now(), time.Now().Add(23*time.Hour)))
		foreign := foreignNameAt("atlatl", "recall", time.Now().Add(-2*time.Hour))
		mem.WriteFile(foreign, make([]byte, 10*size))

		var ev evictions
		var rec recorder
		hooks := rec.hooks()
		hooks.OnFileEvicted = ev.add
		o := newOffloader(t, func(c *lro.Config) { c.MaxDirBytes = 3*size + size/2 }, lro.WithFS(mem), lro.WithHooks(hooks))
		var paths []string
		for range 3 {
			out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
			require.NoError(t, err)
			require.Equal(t, lro.Offloaded, out.Action, out.Warning)
			paths = append(paths, out.Response.FilePath)
			time.Sleep(time.Second)
		}
		// The earlier file expires in 23 h, ours in 1 h: ours go first.
		require.Len(t, ev.all(), 1)
		e := ev.all()[0]
		assert.Equal(t, paths[0], e.Path, "the first to expire")
		assert.Equal(t, paths[2], e.For)
		assert.Equal(t, size, e.Bytes)
		assert.Equal(t, 3*size+size/2, e.Quota)
		assert.Equal(t, 3*size, e.Used, "the earlier process's file and two of ours")
		assert.Contains(t, e.Reason, fmt.Sprintf("max_dir_bytes is %d", e.Quota))
		assert.Contains(t, mem.Names(), foreign, "another server's file is not ours to evict")
		assert.Contains(t, mem.Names(), earlier)
		assert.Equal(t, 3*size, lro.Usage(o), "another server's file is not counted")
		assert.Empty(t, rec.Failed())
	})
}

func TestPerFileCap(t *testing.T) {
	recs := memories(t, 100, lro.DetailFull) // ~70 KB
	var rec recorder
	o := newOffloader(t, nil, lro.WithFS(lrotest.NewMemFS("/lro")), lro.WithMaxFileBytes(10_000), lro.WithHooks(rec.hooks()))
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
	require.NoError(t, err)
	checkTruncated(t, o, out, recs, &rec, "per-file cap")
	assert.ErrorIs(t, out.Err, lro.ErrFileTooLarge)

	o = newOffloader(t, nil, lro.WithFS(lrotest.NewMemFS("/lro")), lro.WithMaxFileBytes(-1))
	out, err = o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
	require.NoError(t, err)
	assert.Equal(t, lro.Offloaded, out.Action, "a negative cap means none")
}

func TestFreeSpaceReserve(t *testing.T) {
	recs := memories(t, 100, lro.DetailFull) // ~70 KB
	t.Run("default reserve", func(t *testing.T) {
		mem := lrotest.NewMemFS("/lro")
		mem.SetDiskSpace(5<<20, 100<<20) // 5 MiB free of 100: under the 5% kept free
		var rec recorder
		o := newOffloader(t, nil, lro.WithFS(mem), lro.WithHooks(rec.hooks()))
		out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
		require.NoError(t, err)
		checkTruncated(t, o, out, recs, &rec, "no space left on device")
		assert.ErrorIs(t, out.Err, lro.ErrLowDiskSpace)
		assert.Contains(t, out.Warning, "under the reserve of 5242880")
		assert.Empty(t, mem.Names())

		mem.SetDiskSpace(6<<20, 100<<20)
		out, err = o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
		require.NoError(t, err)
		assert.Equal(t, lro.Offloaded, out.Action, out.Warning)
	})
	t.Run("no reserve", func(t *testing.T) {
		mem := lrotest.NewMemFS("/lro")
		mem.SetDiskSpace(1<<20, 100<<20)
		o := newOffloader(t, nil, lro.WithFS(mem), lro.WithMinFreeBytes(-1))
		out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
		require.NoError(t, err)
		assert.Equal(t, lro.Offloaded, out.Action, out.Warning)
	})
	t.Run("real file system", func(t *testing.T) {
		o := newOffloader(t, nil, lro.WithMinFreeBytes(1<<62))
		out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
		require.NoError(t, err)
		require.Equal(t, lro.Truncated, out.Action)
		if errors.Is(out.Err, lro.ErrLowDiskSpace) {
			assert.Contains(t, out.Warning, "free")
		} else {
			t.Skipf("no statfs here: %v", out.Err)
		}
	})
}

// TestQuotaCountsEarlierFiles: a new process counts the files its
// predecessors left, from its first scan, and evicts them to make room.
func TestQuotaCountsEarlierFiles(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := range 5 {
		name := nameAt("atlatl", "recall", time.Now().Add(-time.Duration(10-i)*time.Minute))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), make([]byte, 100_000), 0o600))
		names = append(names, name)
	}
	var ev evictions
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir; c.MaxDirBytes = 500_000 },
		lro.WithHooks(lro.Hooks{OnFileEvicted: ev.add}), lro.WithoutJanitor())
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailFull)})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action, out.Warning)
	require.Len(t, ev.all(), 1)
	assert.Equal(t, filepath.Join(dir, names[0]), ev.all()[0].Path, "the oldest, left by an earlier process")
	assert.LessOrEqual(t, lro.Usage(o), int64(500_000))
}
