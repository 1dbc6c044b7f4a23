package lro_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentOffloads runs 200 offloads at once while the janitor sweeps
// the same directory: every file is unique, complete and parseable, and no
// sweep deletes a fresh or half-written file.
func TestConcurrentOffloads(t *testing.T) {
	var rec recorder
	o := newOffloader(t, nil, lro.WithHooks(rec.hooks()))
	recs := memories(t, 60, lro.DetailMedium)
	// Expired files of an earlier process, for the sweeps to find.
	dir := o.Config().OutputDir
	const expired = 50
	for i := range expired {
		name := nameAt("atlatl", "recall", time.Now().Add(-2*time.Hour-time.Duration(i)*time.Second))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o600))
	}
	ctx, stop := context.WithCancel(context.Background())
	var sweeps sync.WaitGroup
	sweeps.Go(func() {
		for ctx.Err() == nil {
			_, err := o.Sweep(ctx)
			assert.NoError(t, err)
		}
	})

	const workers = 200
	paths := make([]string, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: lro.DetailMedium, Records: recs})
			if assert.NoError(t, err) && assert.Equal(t, lro.Offloaded, out.Action, out.Warning) {
				paths[i] = out.Response.FilePath
			}
		})
	}
	wg.Wait()
	stop()
	sweeps.Wait()
	assert.Len(t, rec.Expired(), expired, "the sweeps and the janitor deleted the expired files, and only them")

	seen := map[string]bool{}
	for _, p := range paths {
		require.NotEmpty(t, p)
		require.False(t, seen[p], "file names are unique")
		seen[p] = true
		h, lines := readJSONL(t, readFile(t, p))
		assert.Equal(t, len(recs), h.Count)
		require.Len(t, lines, len(recs))
		assert.Equal(t, string(recs[59]), string(lines[59]), "the file is complete")
	}
	entries, err := os.ReadDir(o.Config().OutputDir)
	require.NoError(t, err)
	assert.Len(t, entries, workers, "no temporary files remain")
	for _, e := range entries {
		assert.True(t, seen[filepath.Join(o.Config().OutputDir, e.Name())])
	}
}
