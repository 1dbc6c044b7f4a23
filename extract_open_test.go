//go:build unix

package lro_test

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtractNeverBlocksOnAFIFO swaps an offloaded file for a FIFO and back
// while lro_extract reads it, the attack: a FIFO that appears
// between the check and open(2) used to block the open until a writer
// came, forever (five hits froze a stdio server). Every call now answers,
// with the records or a refusal, at once.
func TestExtractNeverBlocksOnAFIFO(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		t.Run(map[bool]string{false: "workers", true: "in process"}[inProcess], func(t *testing.T) {
			c, path := offloadedForExtract(t, inProcess)
			saved := path + ".saved"
			extract(t, c, map[string]any{"file_path": path, "recipe": 4}) // a worker started, the file read

			stop := make(chan struct{})
			var swaps atomic.Int64
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					require.NoError(t, os.Rename(path, saved))
					require.NoError(t, syscall.Mkfifo(path, 0o600))
					time.Sleep(time.Millisecond)
					require.NoError(t, os.Remove(path))
					require.NoError(t, os.Rename(saved, path))
					time.Sleep(time.Millisecond)
					swaps.Add(1)
				}
			})
			var slowest time.Duration
			refused := 0
			deadline := time.Now().Add(time.Second)
			for time.Now().Before(deadline) {
				start := time.Now()
				res := extract(t, c, map[string]any{"file_path": path, "recipe": 4})
				slowest = max(slowest, time.Since(start))
				if res.IsError {
					refused++
					assert.Regexp(t, `not a regular file|no longer exists|changed|cannot read`, textOf(t, res, 0))
				}
			}
			close(stop)
			wg.Wait()
			t.Logf("%d swaps, %d calls refused; the slowest call took %v", swaps.Load(), refused, slowest)
			testenv.Within(t, slowest, ordinaryBound, "the slowest call beside the swaps")

			require.NoError(t, syscall.Mkfifo(saved, 0o600)) // nobody ever writes to it
			require.NoError(t, os.Rename(saved, path))
			res := extract(t, c, map[string]any{"file_path": path, "recipe": 4})
			assert.True(t, res.IsError)
			assert.Contains(t, textOf(t, res, 0), "not a regular file")
		})
	}
}

// TestExtractRefusesAHardLink: a hard link planted in the offload
// directory, under an offloaded file's name, to a file outside it, is not
// read (it used to be).
func TestExtractRefusesAHardLink(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		t.Run(map[bool]string{false: "workers", true: "in process"}[inProcess], func(t *testing.T) {
			c, path := offloadedForExtract(t, inProcess)
			outside := filepath.Join(t.TempDir(), "secret.jsonl")
			require.NoError(t, os.WriteFile(outside, readFile(t, path), 0o600))
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Link(outside, path))

			res := extract(t, c, map[string]any{"file_path": path, "recipe": 4})
			assert.True(t, res.IsError)
			assert.Contains(t, textOf(t, res, 0), "has 2 links; an offloaded file has one")
		})
	}
}

// offloadedForExtract serves the memory server with lro_extract, queries
// running in process or in workers, and offloads a recall: the client
// and the file's path.
func offloadedForExtract(t *testing.T, inProcess bool) (*client.Client, string) {
	t.Helper()
	o := newOffloader(t, nil, lro.WithExtractLimits(lro.ExtractLimits{Timeout: attackTimeout, InProcess: inProcess}))
	s := memserver.New(testStore, o)
	mcpgo.AddExtractTool(s, o)
	c := connect(t, s)
	return c, offloadedPath(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 50}))
}
