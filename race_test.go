package lro_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentOffloads runs 200 offloads at once while the janitor sweeps
// the same directory: every file is unique, complete and parseable, and no
// sweep deletes a fresh or half-written file.
func TestConcurrentOffloads(t *testing.T) {
	o := newOffloader(t, nil)
	recs := memories(t, 60, lro.DetailMedium)
	ctx, stop := context.WithCancel(context.Background())
	var sweeps sync.WaitGroup
	sweeps.Go(func() {
		for ctx.Err() == nil {
			n, err := o.Sweep(ctx)
			assert.NoError(t, err)
			assert.Zero(t, n)
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
