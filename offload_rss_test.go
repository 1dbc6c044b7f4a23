package lro_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
	"github.com/mcplro/lro/internal/memstore"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 40: what an offload may add to the server's resident memory. Its
// peak may rise by the handler's own result and at most 1.5 times the
// file it writes; once served, resident memory returns within 64 MiB of
// where it was before the call.
const (
	offloadPeakFactor  = 1.5
	offloadRSSReturned = 64 << 20
)

// TestOffloadPeakRSS offloads 10,000 generated memories through the
// example server, both ways a handler hands over a set: lro.Collect
// (collect_all below) and a typed tool's result, its text and structured
// content (export_memories). TestOffloadPeakRSSFull does the same with
// the 100,000 memories of issue 40.
func TestOffloadPeakRSS(t *testing.T) { offloadPeakRSS(t, 10_000) }

// TestOffloadPeakRSSFull is TestOffloadPeakRSS at 100,000 memories.
func TestOffloadPeakRSSFull(t *testing.T) {
	testenv.SkipUnlessFull(t) // generates 100,000 memories, writes 140 MB
	offloadPeakRSS(t, 100_000)
}

func offloadPeakRSS(t *testing.T, n int) {
	if mode := os.Getenv("LRO_OFFLOAD_RSS_CHILD"); mode != "" {
		offloadRSSChild(t, mode, n)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status and resets its peak with /proc/self/clear_refs")
	}
	if extractRace {
		t.Skip("the race detector's shadow memory multiplies resident memory; CI runs this test without -race")
	}
	for _, mode := range []string{"collect", "result"} {
		t.Run(mode, func(t *testing.T) {
			// A process of its own: the peak of this one holds every test before.
			cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()[:strings.IndexByte(t.Name(), '/')]+"$", "-test.v")
			cmd.Env = append(os.Environ(), "LRO_OFFLOAD_RSS_CHILD="+mode, "GOGC=100")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			var base, handler, peak, after, count, size, allocated int64
			for line := range strings.SplitSeq(string(out), "\n") {
				if _, err := fmt.Sscanf(strings.TrimSpace(line), "rss base=%d handler=%d peak=%d after=%d records=%d file=%d allocated=%d",
					&base, &handler, &peak, &after, &count, &size, &allocated); err == nil {
					break
				}
			}
			require.NotZero(t, peak, "the child reported nothing: %s", out)
			own := handler - base
			rise := peak - handler
			t.Logf("%s, %d records, a file of %.1f MB: RSS %d MB before; the handler's result +%d MB; peak +%d MB beyond it (%.2f× the file); %d MB after (%+d MB); the offload allocated %.1f MB",
				mode, count, float64(size)/1e6, base>>20, own>>20, rise>>20, float64(rise)/float64(size), after>>20, (after-base)>>20, float64(allocated)/1e6)
			assert.Equal(t, int64(n), count)
			assert.LessOrEqual(t, float64(rise), offloadPeakFactor*float64(size), "peak RSS beyond the handler's result")
			assert.LessOrEqual(t, after-base, int64(offloadRSSReturned), "RSS after the offload")
		})
	}
}

// offloadRSSChild runs one offload of n memories and prints the resident
// memory before it, at the end of the handler (its own result), at the
// peak, and after.
func offloadRSSChild(t *testing.T, mode string, n int) {
	store := memstore.New(memstore.Generate(n, 17))
	o := newOffloader(t, nil, append(memserver.Policies(), lro.WithoutJanitor(), lro.WithMaxResultBytes(1<<30),
		lro.WithTool("collect_all", lro.ToolPolicy{Generic: true}))...)
	var handler int64
	var allocAt int64
	// Inside lro's middleware, around the handler: the peak when the
	// handler's result is built, before lro sees it.
	mark := server.WithToolHandlerMiddleware(func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := next(ctx, req)
			if handler == 0 {
				handler = testenv.ProcStatus(t, "VmHWM")
				allocAt = totalAlloc()
			}
			return res, err
		}
	})
	s := memserver.New(store, o, mark)
	s.AddTool(mcp.NewTool("collect_all"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		all, _ := store.List("", 0, 0)
		mems := make([]any, len(all))
		for i, m := range all {
			mems[i], _ = memstore.Project(m, "full")
		}
		handler = testenv.ProcStatus(t, "VmHWM")
		allocAt = totalAlloc()
		if lro.Collect(ctx, mems, nil) {
			return mcp.NewToolResultText(""), nil
		}
		return mcp.NewToolResultJSON(mems)
	})
	c := connect(t, s)
	tool, args := "collect_all", map[string]any(nil)
	if mode == "result" {
		tool, args = "export_memories", map[string]any{"limit": n, "detail": "full"}
	}
	// Where RSS was: the store's pages only, every free one given back.
	debug.FreeOSMemory()
	base := testenv.ProcStatus(t, "VmRSS")
	// Peak resident memory from here on: 5 resets VmHWM to VmRSS.
	require.NoError(t, os.WriteFile("/proc/self/clear_refs", []byte("5"), 0))
	released := lro.MemoryReleases()
	d := descriptor(t, callTool(t, c, tool, args))
	peak := testenv.ProcStatus(t, "VmHWM")
	allocated := totalAlloc() - allocAt
	info, err := os.Stat(d.FilePath)
	require.NoError(t, err)
	if info.Size() >= lro.ReleaseBytes {
		// The offload gives the memory back in the background, once its
		// result is dropped: wait for it (no deadline; go test's own
		// timeout stops a release that never comes).
		for lro.MemoryReleases() == released {
			time.Sleep(10 * time.Millisecond)
		}
	} else {
		runtime.GC()
	}
	after := testenv.ProcStatus(t, "VmRSS")
	fmt.Printf("rss base=%d handler=%d peak=%d after=%d records=%d file=%d allocated=%d\n", base, handler, peak, after, d.Summary.Count, info.Size(), allocated)
}

// totalAlloc returns the bytes this process has allocated so far.
func totalAlloc() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.TotalAlloc)
}
