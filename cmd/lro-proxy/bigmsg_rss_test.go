package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawProxy is `lro-proxy -- bigServer` driven line by line, so that the
// test reads the proxy's resident memory (its process's VmHWM) and the
// size of each message it writes.
type rawProxy struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	// seen, when not nil, is called when a message that is not the
	// answer comes.
	seen func()
}

// startBigProxy starts lro-proxy in front of bigServer, whose messages are
// n bytes, with the proxy's args, and initializes it.
func startBigProxy(t *testing.T, n int, args ...string) *rawProxy {
	self, err := os.Executable()
	require.NoError(t, err)
	return startRawProxy(t, n, append(args, "--", self)...)
}

// startRawProxy starts lro-proxy with args and initializes it.
func startRawProxy(t *testing.T, n int, args ...string) *rawProxy {
	cmd := exec.Command(proxyBin, args...)
	cmd.Env = append(os.Environ(), bigServerEnv+"="+strconv.Itoa(n), "ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR="+t.TempDir())
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &rawProxy{t: t, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	p.call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rss","version":"1"}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.call(2, "tools/list", `{}`)
	return p
}

func (p *rawProxy) send(line string) {
	_, err := io.WriteString(p.in, line+"\n")
	require.NoError(p.t, err)
}

// call sends the request id and returns its answer and the messages the
// proxy wrote before it.
func (p *rawProxy) call(id int, method, params string) (answer []byte, before [][]byte) {
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	want := fmt.Sprintf(`"id":%d`, id)
	for {
		line, err := p.out.ReadBytes('\n')
		require.NoError(p.t, err, "%s: the proxy's output ended", method)
		head, tail := line[:min(len(line), 64)], line[max(0, len(line)-64):]
		if !strings.Contains(string(head), `"method"`) && (strings.Contains(string(head), want) || strings.Contains(string(tail), want)) {
			return line, before
		}
		before = append(before, line)
		if p.seen != nil {
			p.seen()
		}
	}
}

// status returns a size field of the proxy's /proc status, in bytes.
func (p *rawProxy) status(field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	require.NoError(p.t, err)
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(p.t, err)
			return kb << 10
		}
	}
	p.t.Fatalf("no %s in the proxy's status", field)
	return 0
}

// TestProxyLargeMessagesPeakRSS reproduces issue 41's measure of the
// proxy's memory: a 50 MB message through `lro-proxy -- COMMAND` took it
// to 509-519 MiB of peak RSS, 10 times the message. Its peak RSS must
// stay within twice the largest message it reads plus 64 MiB, for a
// notification (and a progress notification after it), a tool result's
// _meta, and a tool answer, each of 50 MB.
func TestProxyLargeMessagesPeakRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the proxy's /proc status")
	}
	const n = 50_000_000
	const n0 = n
	for _, tool := range []string{"notify", "meta", "answer", "notify-remote", "meta-remote"} {
		t.Run(tool, func(t *testing.T) {
			var p *rawProxy
			if tool == "notify-remote" || tool == "meta-remote" {
				// The remote sends the notifications on the call's event
				// stream, and answers once the client has read them.
				var n notifications
				n.got = make(chan struct{})
				p = startRawProxy(t, n0, "-remote", bigNotifier(t, n0, &n))
				var once sync.Once
				p.seen = func() { once.Do(func() { close(n.got) }) }
			} else {
				p = startBigProxy(t, n0)
			}
			tool, _ = strings.CutSuffix(tool, "-remote")
			idle := p.status("VmRSS")
			answer, before := p.call(3, "tools/call", `{"name":"`+tool+`","arguments":{},"_meta":{"progressToken":"rss"}}`)
			peak := p.status("VmHWM")
			largest := len(answer)
			for _, m := range before {
				largest = max(largest, len(m))
			}
			t.Logf("%s: a message of %d MB read; the largest the client got: %d B; the proxy's RSS %d MiB idle, peak %d MiB (%.1f× the message)",
				tool, n/1_000_000, largest, idle>>20, peak>>20, float64(peak)/n)
			assert.LessOrEqual(t, peak, int64(2*n+64<<20), "the proxy's peak RSS within twice the message plus 64 MiB")
			switch tool {
			case "notify":
				assert.LessOrEqual(t, largest, 64<<10+1, "the notifications cut, within 64 KiB and a newline")
			case "meta":
				assert.Contains(t, string(answer), "_meta (about", "the note of the _meta left out")
				assert.NotContains(t, string(answer), "example.com/trace")
			case "answer":
				assert.Contains(t, string(answer), `\"offloaded\":true`, "offloaded: %.300s", answer)
			}
		})
	}
}
