package lro

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro/internal/admit"
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
//
// Requests are counted, not ids: two requests of one id hold two places.
// A place is freed when an answer is written, and only then: a cancelled
// request is still answered by mcp-go once its handler returns, and until
// then its handler and its answer hold memory.
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
	g := &inflight{ctx: ctx, limit: limit, places: admit.New("requests"), held: map[string][]*admit.Ticket{}}
	return ss.Listen(ctx, &gatedReader{src: bufio.NewReaderSize(in, 64<<10), g: g}, &answerWriter{dst: out, g: g})
}

// inflight holds the places of the requests read whose answers are not
// written yet, by id: a list for each, since a client may reuse an id.
type inflight struct {
	ctx    context.Context
	limit  int
	places *admit.Admission
	mu     sync.Mutex
	held   map[string][]*admit.Ticket // request id (as encoding/json writes it) → the places of its requests
}

// admit waits for a place for a request of id, and takes it; it gives up
// when the server stops.
func (g *inflight) admit(id string) {
	t, err := g.places.Enter(g.ctx, admit.Request{Limit: g.limit, Wait: -1})
	if err != nil {
		return // the server stops: mcp-go ends with it
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held[id] = append(g.held[id], t)
}

// done frees the place of a request of id, if one holds one.
func (g *inflight) done(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ts := g.held[id]
	if len(ts) == 0 {
		return
	}
	ts[0].Leave()
	if len(ts) == 1 {
		delete(g.held, id)
	} else {
		g.held[id] = ts[1:]
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
		if method, id, ok := messageOf(line); ok && method != "" && id != "" && method != "tools/call" {
			r.g.admit(id)
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// answerWriter frees the place of each request whose answer it writes.
type answerWriter struct {
	dst io.Writer
	g   *inflight
}

func (w *answerWriter) Write(p []byte) (int, error) {
	n, err := w.dst.Write(p)
	for line := range bytes.SplitSeq(p[:n], []byte("\n")) {
		if method, id, ok := messageOf(line); ok && method == "" && id != "" {
			w.g.done(id)
		}
	}
	return n, err
}

// messageOf returns the method and the id of a JSON-RPC message line,
// and whether it is one: a request has both, an answer an id only. The id
// is as encoding/json writes the value it decodes to, which is how
// mcp-go writes it back (7.0 comes back as 7). A line mcp-go cannot parse
// is answered with no id, so it is no request here; nor is a message
// with a method and a result (not null), which mcp-go leaves unanswered.
func messageOf(line []byte) (method, id string, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || !jsonscan.Valid(line) {
		return "", "", false
	}
	if m, found := jsonscan.Lookup(line, "method"); found {
		s, isString := jsonscan.Unquote(m)
		if !isString {
			return "", "", false
		}
		if r, answer := jsonscan.Lookup(line, "result"); answer && string(r) != "null" {
			return "", "", false
		}
		method = s
	}
	raw, found := jsonscan.Lookup(line, "id")
	if !found {
		return method, "", true
	}
	var v any
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return method, "", true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return method, "", true
	}
	return method, string(b), true
}
