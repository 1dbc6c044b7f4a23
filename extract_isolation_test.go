package lro_test

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/lrotest"
	"github.com/mcplro/lro/mcpgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// readCountingFS is a MemFS that counts the bytes read from its files, as
// a store counts what it sends.
type readCountingFS struct {
	*lrotest.MemFS
	read atomic.Int64
}

func (c *readCountingFS) Open(name string) (fs.File, error) {
	f, err := c.MemFS.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, n: &c.read}, nil
}

type countingFile struct {
	fs.File
	n *atomic.Int64
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.n.Add(int64(n))
	return n, err
}

// TestExtractStoreFilesRunInWorkers: the files of an FS that is not a
// directory of this system (an object store; here a MemFS) are queried in
// worker processes, from a local copy made on the first query and kept:
// the second query reads nothing of the store. Before, their queries ran
// in the server (peak 1,012 MiB against 35 MiB with workers).
func TestExtractStoreFilesRunInWorkers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no workers")
	}
	reader := sdkmetric.NewManualReader()
	fsys := &readCountingFS{MemFS: lrotest.NewMemFS("/store/lro")}
	// Limits of its own: workers are shared by the Offloaders of a
	// process that have the same limits.
	lim := lro.WithExtractLimits(lro.ExtractLimits{Timeout: 3 * time.Second, CacheBytes: 12346 << 10})
	o := newOffloader(t, nil, lro.WithFS(fsys), lim, lro.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	s := memserver.New(testStore, o)
	mcpgo.AddExtractTool(s, o)
	c := connect(t, s)
	path := offloadedPath(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 200, "detail": "full"}))
	size := int64(len(must(fsys.ReadFile(filepath.Base(path)))))

	fsys.read.Store(0)
	res := extract(t, c, map[string]any{"file_path": path, "query": "length", "slurp": true})
	require.False(t, res.IsError, textOf(t, res, 0))
	assert.Equal(t, "200\n", textOf(t, res, 0))
	assert.NotEmpty(t, lro.ExtractWorkerPIDs(o), "run by a worker")
	assert.Equal(t, size, fsys.read.Load(), "the file was read once, for its copy")

	fsys.read.Store(0)
	res = extract(t, c, map[string]any{"file_path": path, "recipe": 6})
	require.False(t, res.IsError, textOf(t, res, 0))
	assert.Zero(t, fsys.read.Load(), "the second query reads the copy")
	assert.Zero(t, sums(t, reader)["lro.extract.unisolated in_process"], "nothing ran in the server")
	assert.Equal(t, 1, lro.ExtractLocalCopies(o))

	require.NoError(t, o.Close())
	assert.Zero(t, lro.ExtractLocalCopies(o), "Close deletes the copies")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestExtractFailsClosedWithoutWorkers: when no worker can start, a query
// fails with a clear error instead of running in the server; the refusal
// is counted, and logged through slog.Default when the Offloader has no
// logger. Before, the pool switched to running queries in the server for
// a minute, and without a logger nothing said so.
func TestExtractFailsClosedWithoutWorkers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no workers")
	}
	exe := filepath.Join(t.TempDir(), "broken-worker")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\necho cannot start >&2\nexit 1\n"), 0o700))
	var logged bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	reader := sdkmetric.NewManualReader()
	o := newOffloader(t, nil, lro.WithExtractLimits(lro.ExtractLimits{WorkerPath: exe}), lro.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	s := memserver.New(testStore, o)
	mcpgo.AddExtractTool(s, o)
	c := connect(t, s)
	path := offloadedPath(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 200, "detail": "full"}))
	for range 2 {
		res := extract(t, c, map[string]any{"file_path": path, "recipe": 6})
		require.True(t, res.IsError)
		assert.Contains(t, textOf(t, res, 0), "only in isolated worker processes, and none could be started")
		assert.Contains(t, textOf(t, res, 0), "cannot start", "the worker's own words")
	}
	assert.Equal(t, int64(2), sums(t, reader)["lro.extract.unisolated no_worker"])
	assert.Contains(t, logged.String(), "level=WARN msg=\"lro: lro_extract refused a query: no worker process can run it\"")
}

// TestExtractInProcessIsReported: queries run in the server only when
// chosen, and each is counted; the choice is logged once.
func TestExtractInProcessIsReported(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	o := newOffloader(t, nil, lro.WithExtractLimits(lro.ExtractLimits{InProcess: true}), lro.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	s := memserver.New(testStore, o)
	mcpgo.AddExtractTool(s, o)
	c := connect(t, s)
	path := offloadedPath(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 200, "detail": "full"}))
	res := extract(t, c, map[string]any{"file_path": path, "recipe": 6})
	require.False(t, res.IsError, textOf(t, res, 0))
	assert.Equal(t, int64(1), sums(t, reader)["lro.extract.unisolated in_process"])
}
