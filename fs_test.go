package lro_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testFSContract checks the promises of the FS interface that the engine
// relies on. plant makes a symbolic link named name in the directory.
func testFSContract(t *testing.T, fsys lro.FS, plant func(name string)) {
	write := func(name, data string) {
		t.Helper()
		f, err := fsys.Create(name)
		require.NoError(t, err)
		_, err = io.WriteString(f, data)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	read := func(name string) string {
		t.Helper()
		f, err := fsys.Open(name)
		require.NoError(t, err)
		defer f.Close()
		b, err := io.ReadAll(f)
		require.NoError(t, err)
		return string(b)
	}

	write("a.tmp", "complete")
	_, err := fsys.Create("a.tmp")
	assert.ErrorIs(t, err, fs.ErrExist, "Create is exclusive")

	require.NoError(t, fsys.Rename("a.tmp", "a.jsonl"))
	assert.Equal(t, "complete", read("a.jsonl"))
	_, err = fsys.Open("a.tmp")
	assert.ErrorIs(t, err, fs.ErrNotExist)

	write("b.tmp", "other")
	assert.ErrorIs(t, fsys.Rename("b.tmp", "a.jsonl"), fs.ErrExist, "Rename never replaces")
	assert.Equal(t, "complete", read("a.jsonl"))

	plant("link.jsonl")
	_, err = fsys.Create("link.jsonl")
	assert.ErrorIs(t, err, fs.ErrExist, "Create does not write through a planted link")
	_, err = fsys.Open("link.jsonl")
	assert.Error(t, err, "Open refuses a link")

	entries, err := fsys.ReadDir()
	require.NoError(t, err)
	types := map[string]fs.FileMode{}
	for _, e := range entries {
		types[e.Name()] = e.Type()
	}
	assert.Equal(t, fs.FileMode(0), types["a.jsonl"])
	assert.Equal(t, fs.ModeSymlink, types["link.jsonl"], "ReadDir describes the link, not its target")

	// The optional Chtimes records a time that ReadDir reports back: the
	// expiry neighbours read.
	when := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	ch, ok := fsys.(interface {
		Chtimes(name string, atime, mtime time.Time) error
	})
	require.True(t, ok, "has Chtimes")
	require.NoError(t, ch.Chtimes("a.jsonl", when, when))
	entries, err = fsys.ReadDir()
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == "a.jsonl" {
			info, err := e.Info()
			require.NoError(t, err)
			assert.True(t, when.Equal(info.ModTime()), "%v", info.ModTime())
		}
	}

	require.NoError(t, fsys.Remove("b.tmp"))
	assert.ErrorIs(t, fsys.Remove("b.tmp"), fs.ErrNotExist)
	assert.True(t, filepath.IsAbs(fsys.Path("a.jsonl")))
	assert.Equal(t, "a.jsonl", filepath.Base(fsys.Path("a.jsonl")))
}

func TestDirFSContract(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o600))
	testFSContract(t, lro.DirFS(dir), func(name string) {
		require.NoError(t, os.Symlink(outside, filepath.Join(dir, name)))
	})
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "secret", string(b), "the link's target is untouched")
}

func TestMemFSContract(t *testing.T) {
	mem := lrotest.NewMemFS("/mem")
	testFSContract(t, mem, mem.Symlink)
}

func TestDirFSStaysInside(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	fsys := lro.DirFS(dir)
	for _, name := range []string{"../escape.jsonl", "/tmp/abs.jsonl", "sub/../../escape.jsonl"} {
		_, err := fsys.Create(name)
		assert.Error(t, err, name)
	}
	// A link inside the directory that points outside is refused too.
	require.NoError(t, os.Symlink(parent, filepath.Join(dir, "up")))
	_, err := fsys.Create("up/escape.jsonl")
	assert.Error(t, err)
	_, err = os.Stat(filepath.Join(parent, "escape.jsonl"))
	assert.True(t, errors.Is(err, fs.ErrNotExist), "nothing was written outside")
}

func TestDirFSRecreatesVanishedDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	fsys := lro.DirFS(dir)
	f, err := fsys.Create("one")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.RemoveAll(dir)) // a tmp cleaner removed it
	f, err = fsys.Create("two")
	require.NoError(t, err, "the directory is created again")
	require.NoError(t, f.Close())
	_, err = os.Stat(filepath.Join(dir, "two"))
	assert.NoError(t, err)
}

func TestDefaultDirIsPrivate(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := lro.DefaultOutputDir()
	assert.Equal(t, tmp, filepath.Dir(dir))

	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = "" })
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailLight)})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action, out.Warning)
	assert.Equal(t, dir, filepath.Dir(out.Response.FilePath))
	fi, err := os.Lstat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

func TestDefaultDirRefusesPlantedDirectory(t *testing.T) {
	for name, plant := range map[string]func(dir string){
		"open to others": func(dir string) {
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chmod(dir, 0o777))
		},
		"a symlink": func(dir string) {
			require.NoError(t, os.Symlink(t.TempDir(), dir))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			plant(lro.DefaultOutputDir())
			o := newOffloader(t, func(c *lro.Config) { c.OutputDir = "" })
			out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Records: memories(t, 100, lro.DetailLight)})
			require.NoError(t, err)
			assert.Equal(t, lro.Truncated, out.Action, "a directory someone else may control is not used")
			assert.Contains(t, out.Warning, lro.DefaultOutputDir())
		})
	}
}

// TestDirectoryMovedAway: after the output directory is moved away and a
// new one made at its path, every new descriptor names a file that
// exists (3 of 3 named missing files, written into the moved directory).
func TestDirectoryMovedAway(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir }, lro.WithoutJanitor())
	recs := memories(t, 100, lro.DetailFull)
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: recs})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)

	require.NoError(t, os.Rename(dir, dir+".old"))
	require.NoError(t, os.Mkdir(dir, 0o700))
	for range 3 {
		out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: recs})
		require.NoError(t, err)
		require.Equal(t, lro.Offloaded, out.Action, out.Warning)
		assert.FileExists(t, out.Response.FilePath)
		assert.Equal(t, dir, filepath.Dir(out.Response.FilePath))
	}
}
