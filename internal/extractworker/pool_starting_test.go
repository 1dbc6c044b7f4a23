//go:build unix

package extractworker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoolWaitsForAWorkerStarting: a call that finds its only worker still
// starting (a loaded machine: here a start of a second) waits for it
// rather than being told busy while nothing runs. lro-proxy's end-to-end
// test met "busy: 0 queries are running and 0 waiting" on a loaded machine.
func TestPoolWaitsForAWorkerStarting(t *testing.T) {
	testenv.Parallel(t)
	self, err := os.Executable()
	require.NoError(t, err)
	slow := filepath.Join(t.TempDir(), "slow-worker")
	script := "#!/bin/sh\nsleep 1\nexec " + shellQuote(self) + "\n"
	require.NoError(t, os.WriteFile(slow, []byte(script), 0o700))

	p := testPool(t, Config{Workers: 1, MaxWorkers: 2, Executable: slow})
	p.Prestart()
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.procs) == 1
	}, 5*time.Second, time.Millisecond, "the worker is starting")

	path, id := jsonlFile(t, 3)
	resp, err := p.Run(context.Background(), request(path, id, `.id`, 5*time.Second), 5*time.Second, 1<<20)
	require.NoError(t, err, "waited for the worker starting")
	assert.Equal(t, []string{"0", "1", "2"}, values(resp))
	assert.Len(t, p.Stats().PIDs, 1, "no second worker started for the call")
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
