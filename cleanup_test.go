package lro_test

import (
	"io/fs"
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

// countingFS counts directory scans, to see that the janitor sleeps and
// does not read the directory per expiry.
type countingFS struct {
	*lrotest.MemFS
	scans atomic.Int32
}

func (c *countingFS) ReadDir() ([]fs.DirEntry, error) {
	c.scans.Add(1)
	return c.MemFS.ReadDir()
}

// nameAt returns a file name written at t by an offloader of the default
// name, as an earlier process of this server would have written it.
func nameAt(prefix, op string, t time.Time) string {
	return prefix + "-" + op + "-" + lro.ULIDOf("", t).String() + ".jsonl"
}

// foreignNameAt returns a file name written at t by a server of another
// name sharing the directory.
func foreignNameAt(prefix, op string, t time.Time) string {
	return prefix + "-" + op + "-" + lro.ULIDOf("another-server", t).String() + ".jsonl"
}

func TestJanitorDeletesAtExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := &countingFS{MemFS: lrotest.NewMemFS("/lro")}
		var rec recorder
		cfg := lro.DefaultConfig()
		cfg.TTLSeconds = 3600
		o, err := lro.New(cfg, lro.WithFS(mem), lro.WithHooks(rec.hooks()))
		require.NoError(t, err)
		defer o.Close()
		synctest.Wait()
		require.EqualValues(t, 1, mem.scans.Load(), "one scan at start")

		start := time.Now()
		out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailLight)})
		require.NoError(t, err)
		require.Equal(t, lro.Offloaded, out.Action)
		require.Len(t, mem.Names(), 1)

		time.Sleep(time.Hour - time.Millisecond)
		synctest.Wait()
		assert.Len(t, mem.Names(), 1, "not before its TTL")
		assert.Empty(t, rec.Expired())
		assert.EqualValues(t, 1, mem.scans.Load(), "no polling while nothing is due")

		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		assert.Empty(t, mem.Names(), "deleted once created_at + TTL has passed")
		require.Len(t, rec.Expired(), 1)
		e := rec.Expired()[0]
		assert.Equal(t, out.Response.FilePath, e.Path)
		assert.Equal(t, start.Truncate(time.Millisecond), e.Created)
		assert.Equal(t, time.Hour, e.TTL)
		assert.Equal(t, start.Add(time.Hour), e.Expires)
	})
}

func TestJanitorFollowsNextExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := &countingFS{MemFS: lrotest.NewMemFS("/lro")}
		var rec recorder
		cfg := lro.DefaultConfig()
		cfg.TTLSeconds = 60
		o, err := lro.New(cfg, lro.WithFS(mem), lro.WithHooks(rec.hooks()))
		require.NoError(t, err)
		defer o.Close()
		for range 3 {
			_, err := o.Offload(ctx, lro.ResultSet{Operation: "list", Records: memories(t, 100, lro.DetailLight)})
			require.NoError(t, err)
			time.Sleep(10 * time.Second)
		}
		// Files at 0s, 10s and 20s expire at 60s, 70s and 80s.
		time.Sleep(31 * time.Second) // now 61s
		synctest.Wait()
		assert.Len(t, mem.Names(), 2)
		time.Sleep(10 * time.Second) // 71s
		synctest.Wait()
		assert.Len(t, mem.Names(), 1)
		time.Sleep(10 * time.Second) // 81s
		synctest.Wait()
		assert.Empty(t, mem.Names())
		assert.Len(t, rec.Expired(), 3)
		assert.EqualValues(t, 2, mem.scans.Load(), "the scan at start and the one a minute later; none per expiry")
	})
}

func TestJanitorDeletesOnlyItsOwnExpiredFiles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := lrotest.NewMemFS("/lro")
		old := time.Now().Add(-2 * time.Hour)
		oldFile := nameAt("atlatl", "recall", old)
		crashed := "." + nameAt("atlatl", "inject", old) + ".tmp"
		fresh := nameAt("atlatl", "search", time.Now().Add(-time.Minute))
		writing := "." + nameAt("atlatl", "inject", old) + ".tmp" // another process is writing it
		keep := []string{
			fresh,
			writing,
			nameAt("other", "recall", old),         // another prefix
			foreignNameAt("atlatl", "recall", old), // another server's
			"." + foreignNameAt("atlatl", "x", old) + ".tmp", // another server's crashed writer's
			"atlatl-recall-NOTAULID.jsonl",                   // not our name pattern
			"atlatl-recall.jsonl",                            // no ULID
			"notes.txt",                                      // unrelated
			nameAt("atlatl", "recall", old) + ".bak",
		}
		for _, name := range append([]string{oldFile, crashed}, keep...) {
			mem.WriteFile(name, []byte("{}\n"))
			require.NoError(t, mem.Chtimes(name, old, old))
		}
		require.NoError(t, mem.Chtimes(writing, time.Now(), time.Now()))
		link := nameAt("atlatl", "list", old)
		mem.Symlink(link)

		var rec recorder
		o, err := lro.New(lro.DefaultConfig(), lro.WithFS(mem), lro.WithHooks(rec.hooks()))
		require.NoError(t, err)
		synctest.Wait()
		require.NoError(t, o.Close())

		assert.ElementsMatch(t, append(keep, link), mem.Names(),
			"expired files of earlier processes go, crashed writers' temp files too; nothing else, no links, no other server's")
		assert.Len(t, rec.Expired(), 2)
	})
}

func TestSweepWithoutJanitor(t *testing.T) {
	mem := lrotest.NewMemFS("/lro")
	mem.WriteFile(nameAt("atlatl", "recall", time.Now().Add(-2*time.Hour)), []byte("{}\n"))
	mem.WriteFile(nameAt("atlatl", "recall", time.Now()), []byte("{}\n"))
	o := newOffloader(t, nil, lro.WithFS(mem), lro.WithoutJanitor())
	assert.Len(t, mem.Names(), 2, "no janitor ran")
	n, err := o.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Len(t, mem.Names(), 1)
}

// stuckFS refuses to remove anything while stuck is set.
type stuckFS struct {
	*lrotest.MemFS
	stuck atomic.Bool
}

func (s *stuckFS) Remove(name string) error {
	if s.stuck.Load() {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.EBUSY}
	}
	return s.MemFS.Remove(name)
}

// TestJanitorRetriesStuckFile: a file that cannot be deleted stays
// counted by the quota and is tried again a minute later.
func TestJanitorRetriesStuckFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := &stuckFS{MemFS: lrotest.NewMemFS("/lro")}
		mem.stuck.Store(true)
		var rec recorder
		cfg := lro.DefaultConfig()
		cfg.TTLSeconds = 10
		o, err := lro.New(cfg, lro.WithFS(mem), lro.WithHooks(rec.hooks()))
		require.NoError(t, err)
		defer o.Close()
		offloadN(t, o, 1)
		used := lro.Usage(o)

		time.Sleep(11 * time.Second)
		synctest.Wait()
		assert.Len(t, mem.Names(), 1, "it could not be deleted")
		assert.Equal(t, used, lro.Usage(o), "so it still counts")

		mem.stuck.Store(false)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Empty(t, mem.Names(), "deleted on the retry")
		assert.Zero(t, lro.Usage(o))
		assert.Len(t, rec.Expired(), 1)
	})
}
