package lro

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro/internal/jsonscan"
)

// MaxStdioRequests is how many requests other than tools/call
// [ServeStdio] serves at once, answered or waiting for their answer to be
// written: past it, it reads no more of stdin until an answer is written.
const MaxStdioRequests = 32

// ServeStdio serves s on stdin and stdout until they close or the process
// gets SIGINT or SIGTERM, as server.ServeStdio does, with a bound on the
// requests in flight. mcp-go's stdio server serves every request but
// tools/call on a goroutine of its own, and each answer waits there, encoded,
// until it is written: a client that sends a thousand resources/read of a
// large file and never reads the answers held 2 GiB of them. ServeStdio
// stops reading stdin while MaxStdioRequests such requests are unanswered
// (tools/call has mcp-go's own bounded queue), so such a client is
// answered as fast as it reads, and holds at most MaxStdioRequests answers.
// A request whose answer is never written (one cancelled by the client)
// frees its place when the client cancels it, or after a minute.
func ServeStdio(s *server.MCPServer, opts ...server.StdioOption) error {
	ss := server.NewStdioServer(s)
	for _, opt := range opts {
		opt(ss)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return listenStdio(ctx, ss, os.Stdin, os.Stdout, MaxStdioRequests)
}

// listenStdio serves ss on in and out with at most limit requests but
// tools/call in flight.
func listenStdio(ctx context.Context, ss *server.StdioServer, in io.Reader, out io.Writer, limit int) error {
	g := &inflight{limit: limit, held: map[string]time.Time{}, ctx: ctx}
	g.cond = sync.NewCond(&g.mu)
	stopWake := context.AfterFunc(ctx, func() { g.mu.Lock(); g.cond.Broadcast(); g.mu.Unlock() })
	defer stopWake()
	return ss.Listen(ctx, &gatedReader{src: bufio.NewReaderSize(in, 64<<10), g: g}, &answerWriter{dst: out, g: g})
}

// staleRequest is how long a request holds its place without an answer
// before it is taken for one that will never come.
const staleRequest = time.Minute

// inflight counts the requests read whose answers are not written yet, by
// id.
type inflight struct {
	ctx   context.Context
	limit int
	mu    sync.Mutex
	cond  *sync.Cond
	held  map[string]time.Time // request id → when it was read
}

// admit waits for a place for the request id, and takes it. It gives up
// the place of a request unanswered for staleRequest when it must.
func (g *inflight) admit(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for len(g.held) >= g.limit && g.ctx.Err() == nil {
		if g.dropStale() {
			continue
		}
		g.waitFor(staleRequest / 4)
	}
	g.held[id] = time.Now()
}

// waitFor waits on cond for at most d. The caller holds mu.
func (g *inflight) waitFor(d time.Duration) {
	t := time.AfterFunc(d, func() { g.mu.Lock(); g.cond.Broadcast(); g.mu.Unlock() })
	g.cond.Wait()
	t.Stop()
}

// dropStale forgets the requests unanswered for staleRequest, and reports
// whether there were any. The caller holds mu.
func (g *inflight) dropStale() bool {
	dropped := false
	for id, at := range g.held {
		if time.Since(at) > staleRequest {
			delete(g.held, id)
			dropped = true
		}
	}
	return dropped
}

// done frees the place of the request id, if it holds one.
func (g *inflight) done(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.held[id]; ok {
		delete(g.held, id)
		g.cond.Broadcast()
	}
}

// gatedReader hands the stdio server one line of stdin at a time, and a
// request but tools/call only once it has a place.
type gatedReader struct {
	src     *bufio.Reader
	g       *inflight
	pending []byte
	err     error // after pending
}

func (r *gatedReader) Read(p []byte) (int, error) {
	if len(r.pending) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		line, err := r.src.ReadBytes('\n')
		r.pending, r.err = line, err
		if len(line) == 0 {
			return 0, err
		}
		r.look(line)
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// look admits a request line, and frees the place of a request the line
// cancels.
func (r *gatedReader) look(line []byte) {
	method, id, ok := messageOf(line)
	switch {
	case !ok:
	case method == "notifications/cancelled":
		if params, found := jsonscan.Lookup(bytes.TrimSpace(line), "params"); found {
			if req, found := jsonscan.Lookup(params, "requestId"); found {
				r.g.done(string(req))
			}
		}
	case method != "" && id != nil && method != "tools/call":
		r.g.admit(string(id))
	}
}

// answerWriter frees the place of each request whose answer it writes.
type answerWriter struct {
	dst io.Writer
	g   *inflight
}

func (w *answerWriter) Write(p []byte) (int, error) {
	n, err := w.dst.Write(p)
	for line := range bytes.SplitSeq(p[:n], []byte("\n")) {
		if method, id, ok := messageOf(line); ok && method == "" && id != nil {
			w.g.done(string(id))
		}
	}
	return n, err
}

// messageOf returns the method and the raw id of a JSON-RPC message line,
// and whether it is one.
func messageOf(line []byte) (method string, id []byte, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return "", nil, false
	}
	if m, found := jsonscan.Lookup(line, "method"); found {
		s, isString := jsonscan.Unquote(m)
		if !isString {
			return "", nil, false
		}
		method = s
	}
	id, _ = jsonscan.Lookup(line, "id")
	if bytes.Equal(id, []byte("null")) {
		id = nil
	}
	return method, id, true
}
