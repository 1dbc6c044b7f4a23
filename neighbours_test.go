package lro_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// offloadN offloads n small results and returns their paths.
func offloadN(t *testing.T, o *lro.Offloader, n int) []string {
	t.Helper()
	var paths []string
	for range n {
		out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailLight)})
		require.NoError(t, err)
		require.Equal(t, lro.Offloaded, out.Action, out.Warning)
		paths = append(paths, out.Response.FilePath)
	}
	return paths
}

func exist(paths []string) (n int) {
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			n++
		}
	}
	return n
}

// TestNeighboursWithDifferentTTLs runs two offloaders on one directory,
// with TTLs of 1 s and 1 h: the long-TTL files survive the short-TTL
// janitor, its rescans and a restart of it, whether the two have one name
// (two processes of one server) or two.
func TestNeighboursWithDifferentTTLs(t *testing.T) {
	for _, shortName := range []string{"", "other-server"} {
		t.Run("short name "+shortName, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				mk := func(ttl int64, opts ...lro.Option) *lro.Offloader {
					cfg := lro.DefaultConfig()
					cfg.OutputDir, cfg.TTLSeconds = dir, ttl
					o, err := lro.New(cfg, opts...)
					require.NoError(t, err)
					return o
				}
				long := mk(3600)
				defer long.Close()
				short := mk(1, lro.WithName(shortName))
				longFiles := offloadN(t, long, 3)
				shortFiles := offloadN(t, short, 3)
				for _, p := range longFiles {
					info, err := os.Stat(p)
					require.NoError(t, err)
					assert.Equal(t, time.Now().Add(time.Hour), info.ModTime(), "the expiry is recorded as the modification time")
				}

				time.Sleep(2 * time.Second)
				synctest.Wait()
				assert.Zero(t, exist(shortFiles), "the short TTL's own files go after 1 s")
				assert.Equal(t, 3, exist(longFiles), "the long TTL's files stay")

				time.Sleep(3 * time.Minute) // three rescans by the short one
				synctest.Wait()
				assert.Equal(t, 3, exist(longFiles))
				n, err := short.Sweep(ctx)
				require.NoError(t, err)
				assert.Zero(t, n)
				require.NoError(t, short.Close())

				restarted := mk(1, lro.WithName(shortName)) // its first scan
				synctest.Wait()
				assert.Equal(t, 3, exist(longFiles), "a restarted short-TTL process keeps them too")
				require.NoError(t, restarted.Close())

				time.Sleep(time.Hour)
				synctest.Wait()
				assert.Zero(t, exist(longFiles), "their own janitor deletes them after 1 h")
			})
		})
	}
}

// TestNeighboursOfOtherNamesAreLeftAlone: a server neither reads (with
// lro_extract) nor deletes nor counts the files of a server of another
// name in the same directory, while a later process of the same server
// cleans up its predecessor's files.
func TestNeighboursOfOtherNamesAreLeftAlone(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	alphaOld := "atlatl-recall-" + lro.ULIDOf("alpha", old).String() + ".jsonl"
	betaOld := "atlatl-recall-" + lro.ULIDOf("beta", old).String() + ".jsonl"
	for _, name := range []string{alphaOld, betaOld} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o600))
	}
	alpha := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir }, lro.WithName("alpha"), lro.WithoutJanitor())
	assert.Equal(t, "alpha", alpha.Name())

	n, err := alpha.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "alpha cleans up after an earlier alpha")
	assert.NoFileExists(t, filepath.Join(dir, alphaOld))
	assert.FileExists(t, filepath.Join(dir, betaOld), "and leaves beta's expired file to beta")

	alphaFiles := offloadN(t, alpha, 3)
	info, err := os.Stat(alphaFiles[0])
	require.NoError(t, err)
	size := info.Size()

	// beta's quota fits one file of its own: its second evicts its first,
	// never one of alpha's, which it does not count either.
	var ev evictions
	beta := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir; c.MaxDirBytes = size + size/2 },
		lro.WithName("beta"), lro.WithoutJanitor(), lro.WithHooks(lro.Hooks{OnFileEvicted: ev.add}))
	betaFiles := offloadN(t, beta, 2)
	assert.Equal(t, 3, exist(alphaFiles))
	assert.Equal(t, 1, exist(betaFiles))
	require.Len(t, ev.all(), 1)
	assert.Equal(t, betaFiles[0], ev.all()[0].Path)
	assert.Equal(t, size, lro.Usage(beta))
	assert.Equal(t, 3*size, lro.Usage(alpha))

	_, err = beta.Extract(ctx, map[string]any{"file_path": alphaFiles[0], "recipe": 1})
	require.Error(t, err, "beta's lro_extract does not read alpha's files")
	assert.Contains(t, err.Error(), "another server")
	_, err = alpha.Extract(ctx, map[string]any{"file_path": alphaFiles[0], "recipe": 2})
	assert.NoError(t, err)
}

// slowFS blocks the first write of each file until release is closed.
type slowFS struct {
	lro.FS
	started chan string // the name of each file whose write blocked
	release chan struct{}
}

func (s *slowFS) Create(name string) (lro.File, error) {
	f, err := s.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &slowFile{File: f, fs: s, name: name}, nil
}

func (s *slowFS) Chtimes(name string, atime, mtime time.Time) error {
	return s.FS.(interface {
		Chtimes(string, time.Time, time.Time) error
	}).Chtimes(name, atime, mtime)
}

type slowFile struct {
	lro.File
	fs      *slowFS
	name    string
	started bool
}

func (f *slowFile) Write(p []byte) (int, error) {
	if !f.started {
		f.started = true
		f.fs.started <- f.name
		<-f.fs.release
	}
	return f.File.Write(p)
}

// TestSlowWriteIsNeverSwept stalls a write for hours, past the TTL and
// past the age at which a temporary file counts as a crashed writer's:
// neither the janitor nor Sweep deletes it, and the offload completes;
// a crashed writer's file of the same age is deleted.
func TestSlowWriteIsNeverSwept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		slow := &slowFS{FS: lro.DirFS(dir), started: make(chan string), release: make(chan struct{})}
		var rec recorder
		cfg := lro.DefaultConfig()
		cfg.OutputDir, cfg.TTLSeconds = dir, 1
		o, err := lro.New(cfg, lro.WithFS(slow), lro.WithHooks(rec.hooks()))
		require.NoError(t, err)
		defer o.Close()

		recs := memories(t, 100, lro.DetailLight)
		var out lro.Outcome
		var wg sync.WaitGroup
		wg.Go(func() {
			var err error
			out, err = o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: recs})
			assert.NoError(t, err)
		})
		tmp := filepath.Join(dir, <-slow.started)
		crashed := filepath.Join(dir, "."+nameAt("atlatl", "inject", time.Now())+".tmp")
		require.NoError(t, os.WriteFile(crashed, []byte("{\"type\":"), 0o600))

		time.Sleep(3 * time.Hour) // the janitor rescans every minute meanwhile
		// Let the janitor finish the rescan it woke for at this instant,
		// so that the sweep below is the only one that sees the files.
		synctest.Wait()
		// Both look untouched for 3 h, as a crashed writer's file would.
		for _, p := range []string{tmp, crashed} {
			require.NoError(t, os.Chtimes(p, time.Now().Add(-3*time.Hour), time.Now().Add(-3*time.Hour)))
		}
		n, err := o.Sweep(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		assert.NoFileExists(t, crashed, "a crashed writer's temporary file is deleted")
		assert.FileExists(t, tmp, "the one being written is not")
		require.Len(t, rec.Expired(), 1)

		close(slow.release)
		wg.Wait()
		require.Equal(t, lro.Offloaded, out.Action, out.Warning)
		h, lines := readJSONL(t, readFile(t, out.Response.FilePath))
		assert.Equal(t, len(recs), h.Count)
		assert.Len(t, lines, len(recs))
		assert.NoFileExists(t, tmp)
	})
}

// TestRecreatedDirectoryIsReopened: another process removes the directory
// and creates it again; the next offload writes into the new one, and the
// tally forgets the files that went with the old one.
func TestRecreatedDirectoryIsReopened(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir; c.MaxDirBytes = 10 << 20 })
	offloadN(t, o, 2)

	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.Mkdir(dir, 0o700))
	paths := offloadN(t, o, 1)
	assert.FileExists(t, paths[0])

	_, err := o.Sweep(ctx)
	require.NoError(t, err)
	info, err := os.Stat(paths[0])
	require.NoError(t, err)
	assert.Equal(t, info.Size(), lro.Usage(o), "only the file in the new directory counts")

	// Recreated by someone careless: refused, with the reason.
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.Chmod(dir, 0o777))
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailLight)})
	require.NoError(t, err)
	assert.Equal(t, lro.Truncated, out.Action)
	assert.Contains(t, out.Warning, "writable by other users")

	// And reopened once fixed.
	require.NoError(t, os.Chmod(dir, 0o700))
	offloadN(t, o, 1)
}

// TestExplicitDirIsChecked: an explicit output_dir gets the checks of the
// default one: ours, and not writable by others.
func TestExplicitDirIsChecked(t *testing.T) {
	offload := func(t *testing.T, dir string) lro.Outcome {
		o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir })
		out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailLight)})
		require.NoError(t, err)
		return out
	}
	t.Run("writable by others", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o777))
		out := offload(t, dir)
		assert.Equal(t, lro.Truncated, out.Action)
		assert.Contains(t, out.Warning, dir+" is writable by other users (mode -rwxrwxrwx)")
		assert.Contains(t, out.Warning, "chmod go-w")
	})
	t.Run("another user's", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to give a directory away")
		}
		dir := t.TempDir()
		require.NoError(t, os.Chown(dir, 65534, 65534))
		out := offload(t, dir)
		assert.Equal(t, lro.Truncated, out.Action)
		assert.Contains(t, out.Warning, "owned by uid 65534, not by this user")
	})
	t.Run("readable by the group", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o750))
		out := offload(t, dir)
		assert.Equal(t, lro.Offloaded, out.Action, out.Warning)
	})
	t.Run("a link to a directory of ours", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "link")
		require.NoError(t, os.Symlink(t.TempDir(), link))
		out := offload(t, link)
		assert.Equal(t, lro.Offloaded, out.Action, out.Warning)
		assert.True(t, strings.HasPrefix(out.Response.FilePath, link+string(filepath.Separator)))
	})
}
