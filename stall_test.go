package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stalledRows yields n records of about 1,000 bytes, then waits for
// resume, as a cursor whose source stopped.
func stalledRows(n int, resume <-chan struct{}) iter.Seq2[json.RawMessage, error] {
	body := strings.Repeat("s", 970)
	return func(yield func(json.RawMessage, error) bool) {
		for i := range n {
			if !yield(json.RawMessage(fmt.Sprintf(`{"id":%d,"body":"%s"}`, i, body)), nil) {
				return
			}
		}
		<-resume
	}
}

// TestCallBesideStalledStream reproduces issue 30's stalled stream: a
// streamed result wrote 19.1 MB of a 20 MiB quota and its source stopped;
// a 4 MB offload of another caller waited for room as long as the stall
// (to the client's 25 s timeout; stdio and HTTP calls have no deadline).
// A wait for room is bounded (a second or two, then the fallback), and a
// spool that gets no record for a while gives its room back.
func TestCallBesideStalledStream(t *testing.T) {
	defer lro.SetRoomWait(100 * time.Millisecond)()   // the default is 2 s
	defer lro.SetSpoolIdle(1500 * time.Millisecond)() // the default is 30 s; long enough to see the stall
	o := newOffloader(t, func(c *lro.Config) { c.MaxDirBytes = 20 << 20 }, lro.WithTool("rows", lro.ToolPolicy{Generic: true}), lro.WithoutJanitor())
	resume := make(chan struct{})
	streamed := make(chan *mcp.CallToolResult, 1)
	handler := streamHandler(o, func() iter.Seq2[json.RawMessage, error] { return stalledRows(19_100, resume) })
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "rows"
		out, err := handler(context.Background(), req)
		assert.NoError(t, err)
		streamed <- out
	}()
	defer func() {
		close(resume)
		out := <-streamed
		require.NotNil(t, out)
		assert.False(t, out.IsError, "the stalled stream gets the fallback, not an error")
	}()

	recs := make([]json.RawMessage, 4000) // 4 MB
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":%d,"body":"%s"}`, i, strings.Repeat("o", 980)))
	}
	set := lro.ResultSet{Operation: "logs", Generic: true, Records: recs, Validated: true}
	offload := func() lro.Outcome {
		back := make(chan lro.Outcome, 1)
		go func() {
			out, err := o.Offload(context.Background(), set)
			assert.NoError(t, err)
			back <- out
		}()
		select {
		case out := <-back:
			return out
		case <-time.After(30 * time.Second): // only a hang misses it
			t.Fatal("a call beside the stalled stream waited for room as long as the stall")
			return lro.Outcome{}
		}
	}

	require.Eventually(t, func() bool { return lro.Reserved(o) >= 19<<20 }, time.Minute, 10*time.Millisecond, "the stream holds its room")
	start := time.Now()
	out := offload()
	t.Logf("a 4 MB offload beside a stream stalled at 19 MB of a 20 MiB quota: %v in %v (%v)", out.Action, time.Since(start).Round(time.Millisecond), out.Err)
	if out.Action == lro.Offloaded {
		assert.Less(t, lro.Reserved(o), int64(1<<20), "offloaded only once the idle spool gave its room back (a slow machine)")
	} else {
		assert.Equal(t, lro.Truncated, out.Action, "the bounded fallback")
		assert.ErrorIs(t, out.Err, lro.ErrOverQuota)
	}

	require.Eventually(t, func() bool { return lro.Reserved(o) < 1<<20 }, time.Minute, 10*time.Millisecond, "the idle spool gives its room back")
	assert.Equal(t, lro.Offloaded, offload().Action, "the room is there again")
}
