package proxy

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// churnListings is how many listings TestChildToolChurnMemoryBound makes:
// each renames the server's 200 tools of 4 KiB.
const churnListings = 100

// TestChildToolChurnMemoryBound: a local server that renames its 200
// tools of 4 KiB at every listing grows the proxy no more than 100 MiB
// over its idle memory, however many listings: the proxy keeps the
// current listing only, as it does of a remote. Before, it kept every
// tool ever listed: +323 MiB after 100 listings (4,859 MiB after 1,522
// in the review); after, +24 MiB.
func TestChildToolChurnMemoryBound(t *testing.T) {
	testenv.SkipUnlessFull(t) // 20 s of churn; TestChildToolListingBounded bounds one listing
	if raceEnabled {
		t.Skip("memory is not measured under the race detector")
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak RSS is read from /proc")
	}
	c := startChild(t, "hostile-churn", Config{})
	list := func(id int) int {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		m := c.wait(strconv.Itoa(id), 30*time.Second)
		var res struct {
			Tools []json.RawMessage `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(m["result"], &res), "%s", m["error"])
		return len(res.Tools)
	}
	for id := 10; id < 15; id++ {
		list(id) // the idle proxy has served a listing or two
	}
	runtime.GC()
	debug.FreeOSMemory()
	idle := testenv.ProcStatus(t, "VmRSS")
	require.NoError(t, os.WriteFile("/proc/self/clear_refs", []byte("5"), 0), "reset the peak RSS")
	for id := 100; id < 100+churnListings; id++ {
		assert.Equal(t, 200, list(id))
		c.notes = c.notes[:0]
	}
	peak := testenv.ProcStatus(t, "VmHWM")
	t.Logf("%d listings of 200 renamed tools of 4 KiB: idle %d MiB, peak %d MiB (+%d MiB)", churnListings, idle>>20, peak>>20, (peak-idle)>>20)
	assert.LessOrEqual(t, peak-idle, int64(100<<20), "the proxy's peak RSS over its idle RSS under tool churn")
}

// TestChildToolListingBounded: a listing of the server larger than
// MaxToolsBytes (1,100 tools of 4 KiB, 4.6 MB) is refused with an error
// naming the limit; the client does not get it. Before, it went to the
// client whole (4,580,401 B); after, an error of 245 B.
func TestChildToolListingBounded(t *testing.T) {
	c := startChild(t, "hostile-bigtools", Config{})
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	m := c.wait("2", 30*time.Second)
	t.Logf("the answer to a listing of 1,100 tools of 4 KiB: %d B", len(m["result"])+len(m["error"]))
	assert.Zero(t, len(m["result"]), "no listing")
	assert.Contains(t, string(m["error"]), "MaxToolsBytes")
	assert.Contains(t, string(m["error"]), "4 MiB")
}

// TestChildToolsListChangedPaced: a server that announces 1,000 tool list
// changes at once reaches the client as at most one a second: the client,
// which lists the tools again at each, is not made to list 1,000 times.
// Before, all 1,000 reached it; after, 1.
func TestChildToolsListChangedPaced(t *testing.T) {
	c := startChild(t, "hostile-churn", Config{})
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"announce","arguments":{}}}`)
	c.wait("2", 30*time.Second)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	c.wait("3", 30*time.Second)
	n := strings.Count(strings.Join(c.notes, "\n"), "list_changed")
	t.Logf("list_changed notifications the client got of 1,000: %d", n)
	assert.GreaterOrEqual(t, n, 1, "the client is told of the change")
	assert.LessOrEqual(t, n, 2, "a burst is told at once, then at most once a second")
}
