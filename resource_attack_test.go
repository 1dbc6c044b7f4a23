package lro_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resourceFile offloads about size bytes of records and returns the URI
// of their file.
func resourceFile(t *testing.T, o *lro.Offloader, size int) string {
	t.Helper()
	recs := make([]json.RawMessage, size/1000)
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":%d,"text":"%s"}`, i, strings.Repeat("r", 980)))
	}
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "export", Records: recs, Generic: true})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action, out.Warning)
	return "lro://files/" + filepath.Base(out.Response.FilePath)
}

// resourceRSSServer returns a server that answers resources/read and the
// URI of a 1 MB file it serves, for a test of the peak RSS: it skips under
// the race detector, whose shadow memory makes RSS meaningless, and where
// /proc does not tell it.
func resourceRSSServer(t *testing.T) (*server.MCPServer, string) {
	t.Helper()
	if extractRace {
		t.Skip("the race detector's shadow memory makes RSS meaningless")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the peak RSS from /proc")
	}
	o := newOffloader(t, nil, lro.WithResourceMaxBytes(2<<20))
	s := server.NewMCPServer("res", "1")
	mcpgo.AddResources(s, o)
	return s, resourceFile(t, o, 1<<20)
}

// TestResourceReadsUnreadStdioPeakRSS reproduces issue 22's stdio case: a
// client that sends 1,000 resources/read of a 1 MB file and never reads
// the replies took the server to 2,314 MiB (1.5-1.9 GiB here). mcp-go's
// stdio server (v1.2.1) serves every request but tools/call on a
// goroutine of its own, and each reply, encoded, waits there for the
// blocked write; the handler never learns whether its reply was written,
// so no admission in it can bound them. mcpgo.ServeStdio reads no more of
// stdin while MaxStdioRequests such requests are unanswered.
func TestResourceReadsUnreadStdioPeakRSS(t *testing.T) {
	s, uri := resourceRSSServer(t)

	serverIn, clientOut := io.Pipe()
	_, serverOut := io.Pipe() // nobody reads the replies
	ss := server.NewStdioServer(s)
	ss.SetErrorLogger(log.New(io.Discard, "", 0))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { admit.Listen(ctx, ss, serverIn, serverOut, mcpgo.MaxStdioRequests) })
	defer func() {
		cancel()
		serverIn.Close()
		serverOut.Close()
		clientOut.Close()
		wg.Wait()
	}()
	resetPeakRSS(t)
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q}}`+"\n", i+1, uri)
	}
	go io.WriteString(clientOut, b.String()) // blocks once the server stops reading
	time.Sleep(time.Second)                  // for the reads to be served, or refused (an unbounded server is past 256 MiB by then)
	runtime.GC()
	peak := statusKB(t, "/proc/self/status", "VmHWM") << 10
	t.Logf("peak RSS of the server: %d MiB", peak>>20)
	assert.Less(t, peak, int64(256<<20))
}

// TestServeStdioBoundsRequestsInFlight: ServeStdio's transport reads at
// most limit requests but tools/call whose answers are not written, and
// answers every one of a thousand to a client that reads them.
func TestServeStdioBoundsRequestsInFlight(t *testing.T) {
	t.Parallel()
	s := server.NewMCPServer("res", "1")
	var served atomic.Int64
	s.AddResource(mcp.NewResource("test://r", "r"), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		served.Add(1)
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: "test://r", Text: strings.Repeat("x", 10<<10)}}, nil
	})
	run := func(t *testing.T, out io.Writer) (io.WriteCloser, func()) {
		in, clientOut := io.Pipe()
		ss := server.NewStdioServer(s)
		ss.SetErrorLogger(log.New(io.Discard, "", 0))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { admit.Listen(ctx, ss, in, out, 8) })
		return clientOut, func() { cancel(); in.Close(); clientOut.Close(); wg.Wait() }
	}
	requests := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"test://r"}}`+"\n", i+1)
		}
		return b.String()
	}

	t.Run("a client that never reads", func(t *testing.T) {
		served.Store(0)
		unread, stuck := io.Pipe() // nobody reads
		clientOut, stop := run(t, stuck)
		go io.WriteString(clientOut, requests(1000))
		time.Sleep(time.Second)
		assert.LessOrEqual(t, served.Load(), int64(8+1), "at most the bound is served while no answer is written")
		unread.Close()
		stop()
	})
	t.Run("a client that reads", func(t *testing.T) {
		served.Store(0)
		answers, w := io.Pipe()
		clientOut, stop := run(t, w)
		defer stop()
		go io.WriteString(clientOut, requests(1000))
		r := bufio.NewReaderSize(answers, 64<<10)
		for i := range 1000 {
			line, err := r.ReadBytes('\n')
			require.NoError(t, err, "answer %d", i+1)
			require.Contains(t, string(line), `"result"`)
		}
		assert.EqualValues(t, 1000, served.Load())
	})
	// An answer frees its request's place whatever the spelling of the
	// request's id, which mcp-go writes back as encoding/json does (7.0
	// as 7), and whatever ids were repeated.
	t.Run("ids as the client spells them", func(t *testing.T) {
		answers, w := io.Pipe()
		in, clientOut := io.Pipe()
		ss := server.NewStdioServer(s)
		ss.SetErrorLogger(log.New(io.Discard, "", 0))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { admit.Listen(ctx, ss, in, w, 1) })
		defer func() { cancel(); in.Close(); clientOut.Close(); w.Close(); wg.Wait() }()
		var b strings.Builder
		for range 50 {
			for _, id := range []string{`7.0`, `"\u0041"`, `1e2`, `7`} {
				fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"method":"ping"}`+"\n", id)
			}
		}
		go io.WriteString(clientOut, b.String())
		r := bufio.NewReader(answers)
		for i := range 200 {
			line, err := r.ReadBytes('\n')
			require.NoError(t, err, "answer %d", i+1)
			require.Contains(t, string(line), `"result"`)
		}
	})
	// A cancelled request frees its place when its handler has returned
	// and its answer is written, not on the cancel: until then the
	// handler, and its answer, hold memory.
	t.Run("a cancelled request frees its place once answered", func(t *testing.T) {
		slow := server.NewMCPServer("slow", "1")
		release := make(chan struct{})
		slow.AddResource(mcp.NewResource("test://slow", "slow"), func(ctx context.Context, _ mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			<-release // a handler that does not look at its context
			return nil, ctx.Err()
		})
		in, clientOut := io.Pipe()
		ss := server.NewStdioServer(slow)
		ss.SetErrorLogger(log.New(io.Discard, "", 0))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		answers, w := io.Pipe()
		wg.Go(func() { admit.Listen(ctx, ss, in, w, 1) })
		pinged := make(chan struct{})
		go func() {
			r := bufio.NewReader(answers)
			for {
				line, err := r.ReadBytes('\n')
				if err != nil {
					return
				}
				if strings.Contains(string(line), `"id":2`) {
					close(pinged)
				}
			}
		}()
		defer func() {
			cancel()
			in.Close()
			clientOut.Close()
			w.Close()
			wg.Wait()
		}()
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://slow"}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
			`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		} {
			_, err := io.WriteString(clientOut, line+"\n")
			require.NoError(t, err)
		}
		select {
		case <-pinged:
			t.Fatal("the cancel freed the place of a request whose handler still runs")
		case <-time.After(300 * time.Millisecond):
		}
		close(release) // the handler returns; mcp-go writes its answer
		select {
		case <-pinged:
		case <-time.After(time.Minute):
			t.Fatal("the answered request kept its place: the next one was never served")
		}
	})
}

// TestResourceReadsHTTPPeakRSS: issue 22. 1,600 concurrent resources/read
// of a 1 MB file over streamable HTTP took the server to 1,055 MiB and
// 76 s (2,150 MiB here, before). Reads are admitted as lro_extract calls
// are (the calls over the budget are told at once to retry), and a whole
// file is read into the text it is returned as, in one copy (io.ReadAll
// and a conversion made three).
func TestResourceReadsHTTPPeakRSS(t *testing.T) {
	testenv.SkipUnlessFull(t) // 1,600 reads; TestResourceReadsUnreadStdioPeakRSS bounds the stdio case
	s, uri := resourceRSSServer(t)
	url := serveHTTP(t, server.NewStreamableHTTPServer(s))
	var lastHead string
	post := func(id int) (ok bool, busy bool) {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, id, uri)
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "resources/read")
		req.Header.Set("Mcp-Name", uri)
		resp, err := http.DefaultClient.Do(req)
		if !assert.NoError(t, err) {
			return false, false
		}
		defer resp.Body.Close()
		head := make([]byte, 4096)
		n, _ := io.ReadFull(resp.Body, head)
		io.Copy(io.Discard, resp.Body)
		lastHead = string(head[:min(n, 300)])
		return strings.Contains(string(head[:n]), `"contents"`), strings.Contains(string(head[:n]), "busy")
	}
	ok, _ := post(0)
	require.True(t, ok, "one read is served: %s", lastHead)

	resetPeakRSS(t)
	var served, refused atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 1600 {
		wg.Go(func() {
			ok, busy := post(i + 1)
			switch {
			case ok:
				served.Add(1)
			case busy:
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	peak := statusKB(t, "/proc/self/status", "VmHWM") << 10
	t.Logf("1,600 concurrent reads in %v: %d served, %d told to retry; peak RSS %d MiB", time.Since(start).Round(time.Millisecond), served.Load(), refused.Load(), peak>>20)
	assert.Equal(t, int64(1600), served.Load()+refused.Load(), "every read is served or told to retry")
	assert.Less(t, peak, int64(peakRSSBound))
}
