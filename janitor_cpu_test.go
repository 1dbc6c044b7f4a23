//go:build unix

package lro_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanCountingFS counts directory reads of a real directory.
type scanCountingFS struct {
	lro.FS
	scans atomic.Int32
}

func (c *scanCountingFS) ReadDir() ([]fs.DirEntry, error) {
	c.scans.Add(1)
	return c.FS.ReadDir()
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestJanitorCPUIsBounded lets 100,000 files expire over 60 seconds (of
// the bubble's fake clock; the janitor's work is real) and measures the
// process's CPU time: the janitor reads the directory at start and once a
// minute, not per expiry, and deletes the files in batches, so its cost is
// a few microseconds a file, a small fraction of a core. Under -race or
// -short it uses 10,000 files.
func TestJanitorCPUIsBounded(t *testing.T) {
	n, perFile := 100_000, 100*time.Microsecond
	if !testenv.Full() || raceEnabled {
		n, perFile = 10_000, time.Millisecond
	}
	const window = 60 * time.Second
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		// Files an earlier process of this server left, expiring one after
		// the other over the next minute: 1,000 distinct expiries, each
		// shared by n/1000 files (hard links of one file, which makes the
		// setup one system call a file).
		const expiries = 1000
		start := time.Now()
		for g := range expiries {
			expires := start.Add(time.Second + time.Duration(g)*(window/expiries))
			src := filepath.Join(dir, "src")
			require.NoError(t, os.WriteFile(src, []byte("{}\n"), 0o600))
			require.NoError(t, os.Chtimes(src, expires, expires))
			for range n / expiries {
				require.NoError(t, os.Link(src, filepath.Join(dir, nameAt("atlatl", "recall", expires.Add(-time.Second)))))
			}
			require.NoError(t, os.Remove(src))
		}

		cpu0 := cpuTime(t)
		fsys := &scanCountingFS{FS: lro.DirFS(dir)}
		var expired atomic.Int64
		cfg := lro.DefaultConfig()
		cfg.OutputDir, cfg.TTLSeconds = dir, 1
		o, err := lro.New(cfg, lro.WithFS(fsys),
			lro.WithHooks(lro.Hooks{OnFileExpired: func(lro.FileExpiredEvent) { expired.Add(1) }}))
		require.NoError(t, err)
		defer o.Close()
		time.Sleep(time.Second + window + time.Second)
		synctest.Wait()
		cpu := cpuTime(t) - cpu0

		assert.EqualValues(t, n, expired.Load(), "every file expired")
		left, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, left)
		assert.LessOrEqual(t, fsys.scans.Load(), int32(2), "a scan at start and one a minute later, none per expiry")
		assert.Less(t, cpu, time.Duration(n)*perFile, "%v of CPU for %d files", cpu, n)
		assert.Less(t, cpu, window/4, "far from a whole core over the minute")
		t.Logf("%d files expiring over %v: %v of CPU (%.1f µs a file, %.2f%% of a core), %d directory reads",
			n, window, cpu, float64(cpu.Microseconds())/float64(n), 100*cpu.Seconds()/window.Seconds(), fsys.scans.Load())
	})
}
