package lro_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeStdioUnreadRequestsOfOneIDPeakRSS reproduces issue 30's stdio
// case: ServeStdio counted the requests in flight by id, so a client that
// never reads its answers and gives every request id 7 was never held
// back. 2,000 resources/read of a 1 MB file took the server to 1,609 MiB,
// each followed by its notifications/cancelled past 2.5 GiB (the cancel
// freed the place before the answer was written), and 100,000 pings of
// one id to 1.1-1.35 GiB. ServeStdio counts requests, and frees a place
// when its answer is written: the server stays within 200 MiB.
func TestServeStdioUnreadRequestsOfOneIDPeakRSS(t *testing.T) {
	s, uri := resourceRSSServer(t)
	read := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":%q}}`+"\n", uri)
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}` + "\n"
	for _, c := range []struct {
		name    string
		request string
		n       int
	}{
		{"2,000 reads of id 7", read, 2000},
		{"2,000 reads of id 7, each cancelled", read + cancel, 2000},
		{"100,000 pings of id 1", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", 100_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name != "2,000 reads of id 7" {
				testenv.SkipUnlessFull(t) // 5-10 s each; the first case is the rule, CI runs all
			}
			if os.Getenv("LRO_STDIO_RSS_CHILD") == "" {
				// A process of its own: this one's peak holds what every
				// test before left (its heap, and the collector's room
				// beside it): 221 MiB after the root's tests, 107 alone.
				cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v")
				cmd.Env = append(os.Environ(), "LRO_STDIO_RSS_CHILD=1")
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
				require.Contains(t, string(out), "peak RSS of the server", "the child ran the case: %s", out)
				for line := range strings.SplitSeq(string(out), "\n") {
					if strings.Contains(line, "peak RSS") {
						t.Log(strings.TrimSpace(line))
					}
				}
				return
			}
			debug.FreeOSMemory() // what earlier tests left is not the server's
			base := statusKB(t, "/proc/self/status", "VmRSS") << 10
			resetPeakRSS(t)
			consumed := serveUnread(t, s, strings.Repeat(c.request, c.n))
			runtime.GC()
			peak := statusKB(t, "/proc/self/status", "VmHWM") << 10
			t.Logf("%s, never read: input read whole: %v; peak RSS of the server %d MiB (%d MiB before)", c.name, consumed, peak>>20, base>>20)
			assert.Less(t, peak, int64(200<<20))
		})
	}
}

// serveUnread serves s with lro.ListenStdio on input, to a client that
// never reads the answers, until the input is read whole or 3 s passed,
// and 2 s more for the requests read to be served; it reports whether the
// input was read whole.
func serveUnread(t *testing.T, s *server.MCPServer, input string) bool {
	serverIn, clientOut := io.Pipe()
	unread, serverOut := io.Pipe() // nobody reads the answers
	ss := server.NewStdioServer(s)
	ss.SetErrorLogger(log.New(io.Discard, "", 0))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { admit.Listen(ctx, ss, serverIn, serverOut, mcpgo.MaxStdioRequests) })
	defer func() {
		cancel()
		serverIn.Close()
		unread.Close()
		clientOut.Close()
		wg.Wait()
	}()
	written := make(chan struct{})
	go func() { io.WriteString(clientOut, input); close(written) }() // blocks once the server stops reading
	consumed := false
	select {
	case <-written:
		consumed = true
	case <-time.After(time.Second): // an unbounded server reads it all by then, and takes GiBs
	}
	time.Sleep(time.Second) // for the requests read to be served
	return consumed
}
