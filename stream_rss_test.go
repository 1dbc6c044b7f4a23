package lro_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/mcplro/lro/internal/testenv"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamedRecords is the size of the streamed listing TestStreamedSetPeakRSS
// offloads, and maxStreamGrowth what it may add to the process's peak
// resident memory.
const (
	streamedRecords = 100_000
	maxStreamGrowth = 64 << 20
)

// TestStreamedSetPeakRSS lists 100,000 full memories through the example
// server's list_memories, which hands them to lro.CollectSeq one at a
// time, and measures the peak resident memory of a process that does
// only that: it may grow by at most 64 MiB over the process with the
// store loaded, however large the set (about 110 MB of JSON here).
func TestStreamedSetPeakRSS(t *testing.T) {
	if os.Getenv("LRO_STREAM_RSS_CHILD") == "1" {
		streamedSetChild(t)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status and resets its peak with /proc/self/clear_refs")
	}
	testenv.SkipUnlessFull(t) // generates 100,000 memories
	if extractRace {
		t.Skip("the race detector's shadow memory multiplies resident memory; CI runs this test without -race")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStreamedSetPeakRSS$", "-test.v")
	cmd.Env = append(os.Environ(), "LRO_STREAM_RSS_CHILD=1", "GOGC=100")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var baseline, peak, count, size int64
	for line := range strings.SplitSeq(string(out), "\n") {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "rss baseline=%d peak=%d records=%d file=%d", &baseline, &peak, &count, &size); err == nil {
			break
		}
	}
	require.NotZero(t, peak, "the child reported nothing: %s", out)
	t.Logf("%d records, a file of %d MB: resident memory %d MB with the store, peak %d MB (+%d MB)",
		count, size>>20, baseline>>20, peak>>20, (peak-baseline)>>20)
	assert.Equal(t, int64(streamedRecords), count)
	assert.LessOrEqual(t, peak-baseline, int64(maxStreamGrowth), "peak resident memory over the baseline")
}

func streamedSetChild(t *testing.T) {
	store := memstore.New(memstore.Generate(streamedRecords, 11))
	o := newOffloader(t, nil, lro.WithoutJanitor())
	c := connect(t, memserver.New(store, o))
	runtime.GC()
	debug.FreeOSMemory()
	baseline := testenv.ProcStatus(t, "VmRSS")
	// Peak resident memory from here on: 5 resets VmHWM to VmRSS.
	require.NoError(t, os.WriteFile("/proc/self/clear_refs", []byte("5"), 0))
	d := descriptor(t, callTool(t, c, "list_memories", map[string]any{"detail": "full", "limit": 100}))
	peak := testenv.ProcStatus(t, "VmHWM")
	info, err := os.Stat(d.FilePath)
	require.NoError(t, err)
	fmt.Printf("rss baseline=%d peak=%d records=%d file=%d\n", baseline, peak, d.Summary.Count, info.Size())
}
