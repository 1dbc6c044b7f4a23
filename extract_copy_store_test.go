package lro_test

import (
	"context"
	"io/fs"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statStore is a MemFS that stands for an object store that can Stat,
// as blobfs does: it counts the files opened (an object store's GETs) and
// the Stats (its HEADs).
type statStore struct {
	*lrotest.MemFS
	opens, stats atomic.Int64
}

func (s *statStore) Path(name string) string { return "mem://bucket/lro/" + name }
func (s *statStore) Remote() bool            { return true }

func (s *statStore) Open(name string) (fs.File, error) {
	s.opens.Add(1)
	return s.MemFS.Open(name)
}

func (s *statStore) Stat(name string) (fs.FileInfo, error) {
	s.stats.Add(1)
	f, err := s.MemFS.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// Issue 32.3: a warm query of a store's file reads nothing of the store.
// Each call used to open the object (a GET, aborted once the copy was
// found) before it looked at its local copy. Now a call within
// copyFreshFor of the last look makes no request at all, and a later one
// a single Stat (a HEAD); the object is read once, for the copy.
func TestExtractWarmQueryReadsNoObject(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no workers, no copies")
	}
	for _, window := range []string{"within the window", "past the window"} {
		t.Run(window, func(t *testing.T) {
			if window == "past the window" {
				lro.SetCopyFreshFor(t, 0)
			} else {
				lro.SetCopyFreshFor(t, time.Hour) // however slow the machine
			}
			fsys := &statStore{MemFS: lrotest.NewMemFS("/unused")}
			o := newOffloader(t, nil, lro.WithFS(fsys), lro.WithoutJanitor())
			out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Records: memories(t, 200, lro.DetailLight)})
			require.NoError(t, err)
			require.Equal(t, lro.Offloaded, out.Action, "%v", out.Err)
			path := out.Response.FilePath

			_, err = o.Extract(context.Background(), map[string]any{"file_path": path, "recipe": 1})
			require.NoError(t, err)
			assert.EqualValues(t, 1, fsys.opens.Load(), "the first query reads the object, for its copy")
			stats := fsys.stats.Load()
			for range 3 {
				text, err := o.Extract(context.Background(), map[string]any{"file_path": path, "query": "select(.id != null) | .id", "slurp": false})
				require.NoError(t, err)
				assert.NotEmpty(t, text)
			}
			_, err = o.Host().ReadResource(context.Background(), "lro://files/"+path[len("mem://bucket/lro/"):]+"/lines/1-2")
			require.NoError(t, err)
			assert.EqualValues(t, 1, fsys.opens.Load(), "warm queries and reads open no object")
			if window == "past the window" {
				assert.EqualValues(t, 4, fsys.stats.Load()-stats, "one metadata request a call")
			} else {
				assert.Zero(t, fsys.stats.Load()-stats, "no request at all")
			}
			assert.Equal(t, 1, lro.ExtractLocalCopies(o))
		})
	}
}
