package proxy

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigEvent returns an event of a notification of n bytes and more.
func bigEvent(n int) []byte {
	return []byte(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("x", n) + "\"}}\n\n")
}

// held is what a stream is given of a large line for its reader to
// have gathered more than largeGarbage of it.
const held = largeGarbage + 64<<10

// readEvents reads an sseLimiter to its end, reporting on out when the
// event comes out of it.
func readEvents(t *testing.T, lim *sseLimiter, name string, out chan<- string) {
	t.Helper()
	buf := make([]byte, 64<<10)
	said := false
	for {
		n, err := lim.Read(buf)
		if n > 0 && !said && bytes.Contains(buf[:n], []byte("data:")) {
			said = true
			out <- name
		}
		if err != nil {
			return
		}
	}
}

// TestLargeLinesOneAtATime reproduces TestProxyLargeMessagesPeakRSS's
// notify-remote failing one run in three (peak RSS 166-217 MiB for a 50
// MB message, against 117): two streams gathering a large line at once.
// The second waits until the first has handed its line on, however long
// the first takes while it reads.
func TestLargeLinesOneAtATime(t *testing.T) {
	defer func(d time.Duration) { largeLineStall = d }(largeLineStall)
	largeLineStall = time.Hour // only the order is tested here
	event := bigEvent(largeGarbage + 1<<20)
	ra, wa := io.Pipe()
	rb, wb := io.Pipe()
	a := newSSELimiter(ra, 0, 0, nil)
	b := newSSELimiter(rb, 0, 0, nil)
	a.notice, a.maxNotice = func(m []byte) []byte { return []byte(`{"jsonrpc":"2.0","method":"cut"}`) }, 1<<10
	b.notice, b.maxNotice = a.notice, a.maxNotice
	out := make(chan string, 2)
	var wg sync.WaitGroup
	wg.Go(func() { readEvents(t, a, "a", out) })
	wg.Go(func() { readEvents(t, b, "b", out) })

	// a gathers past largeGarbage: it holds the turn. (A pipe's write
	// returns once read, and a's reader keeps at most 32 KiB unread.)
	_, err := wa.Write(event[:held])
	require.NoError(t, err)
	require.Len(t, largeLineTurn, 1, "a holds the turn")
	// b's whole event is written while a's line is still being read, in
	// small pieces.
	wg.Go(func() { _, _ = wb.Write(event); wb.Close() })
	rest := event[held:]
	for len(rest) > 0 {
		n := min(len(rest), 64<<10)
		_, err := wa.Write(rest[:n])
		require.NoError(t, err)
		rest = rest[n:]
	}
	wa.Close()
	wg.Wait()
	close(out)
	var order []string
	for name := range out {
		order = append(order, name)
	}
	assert.Equal(t, []string{"a", "b"}, order, "the order the events came out in")
	assert.Zero(t, len(largeLineTurn), "the turn given back")
}

// TestLargeLineTurnNotWaitedForAStalledHolder: a stream whose large line
// stops coming (a remote writing its streams in turn) does not hold the
// others past largeLineStall, and a stream closed while it holds the turn
// gives it back.
func TestLargeLineTurnNotWaitedForAStalledHolder(t *testing.T) {
	defer func(d time.Duration) { largeLineStall = d }(largeLineStall)
	largeLineStall = 50 * time.Millisecond
	event := bigEvent(largeGarbage + 1<<20)
	ra, wa := io.Pipe()
	a := newSSELimiter(ra, 0, 0, nil)
	out := make(chan string, 2)
	var wg sync.WaitGroup
	wg.Go(func() { readEvents(t, a, "a", out) })
	_, err := wa.Write(event[:held]) // and no more
	require.NoError(t, err)
	require.Len(t, largeLineTurn, 1, "a holds the turn")
	b := newSSELimiter(io.NopCloser(bytes.NewReader(event)), 0, 0, nil)
	b.notice, b.maxNotice = func(m []byte) []byte { return []byte(`{"jsonrpc":"2.0","method":"cut"}`) }, 1<<10
	wg.Go(func() { readEvents(t, b, "b", out) })
	assert.Equal(t, "b", <-out, "b read past a's stalled line")
	a.Close()
	wa.CloseWithError(io.ErrClosedPipe)
	wg.Wait()
	assert.Zero(t, len(largeLineTurn), "the turn given back by a, closed")
}
