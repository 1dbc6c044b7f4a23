//go:build unix

package extractworker

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oldWorker writes a program that says hello as a worker of an older
// protocol would, then waits for its stdin to close: a stale lro-worker
// on PATH.
func oldWorker(t *testing.T) string {
	t.Helper()
	h, err := json.Marshal(hello{Protocol: protocolVersion - 1, PID: 1})
	require.NoError(t, err)
	frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(h)))
	frame = binary.BigEndian.AppendUint32(frame, uint32(len(h)))
	frame = append(frame, h...)
	var esc strings.Builder
	for _, b := range frame {
		fmt.Fprintf(&esc, `\%03o`, b)
	}
	path := filepath.Join(t.TempDir(), "lro-worker")
	script := "#!/bin/sh\nprintf '" + esc.String() + "'\nexec cat >/dev/null\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o700))
	return path
}

// TestPoolSkipsAWorkerOfAnotherProtocol: a program that answers with
// another protocol is given up for the next candidate, and queries run
// there (issue 30: a stale lro-worker on PATH failed every query, with
// no fallback).
func TestPoolSkipsAWorkerOfAnotherProtocol(t *testing.T) {
	old := oldWorker(t)
	path, id := jsonlFile(t, 10)

	p := testPool(t, Config{Workers: 1, CacheBytes: 1 << 20, Executable: old, Fallbacks: []string{""}})
	for range 2 {
		resp, err := p.Run(context.Background(), request(path, id, `.id`, 5*time.Second), 5*time.Second, 1<<20)
		require.NoError(t, err)
		require.Nil(t, resp.Failure)
		assert.Len(t, resp.Values, 10)
	}
	exe, n := p.programNow()
	assert.Equal(t, 1, n, "the old program is given up for good")
	assert.Empty(t, exe)

	// Without a fallback, the call fails, and says why.
	p = testPool(t, Config{Workers: 1, CacheBytes: 1 << 20, Executable: old})
	_, err := p.Run(context.Background(), request(path, id, `.id`, 5*time.Second), 5*time.Second, 1<<20)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), fmt.Sprintf("speaks protocol %d, not %d", protocolVersion-1, protocolVersion))
}
