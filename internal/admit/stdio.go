package admit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/mcplro/lro/internal/jsonscan"
)

// Stdio bounds the requests of one JSON-RPC connection over lines (MCP's
// stdio transport) that a server reads from in and answers on out, as
// mcp-go's StdioServer does: every request but tools/call (which mcp-go
// queues itself, and whose sampling answers must still be read) takes a
// place of an Admission of limit places when its line is read, and gives
// it back when the line of its answer is written. The returned reader
// stops handing lines over while limit requests are unanswered, so a
// client that never reads its answers holds at most limit of them; the
// returned writer frees the places. Both are for one server's Listen:
// mcpgo.ServeStdio (through [Listen]) and the proxy's stdio loop use it,
// so that no stdio server of this module goes around the bound.
func Stdio(ctx context.Context, in io.Reader, out io.Writer, limit int) (io.Reader, io.Writer) {
	g := &inflight{ctx: ctx, limit: limit, places: New("requests"), held: map[string][]*Ticket{}}
	return &gatedReader{src: bufio.NewReaderSize(in, 64<<10), g: g}, &answerWriter{dst: out, g: g}
}

// A Listener serves one JSON-RPC connection over lines on in and out
// until ctx is done or in ends, as mcp-go's (*server.StdioServer).Listen
// does.
type Listener interface {
	Listen(ctx context.Context, in io.Reader, out io.Writer) error
}

// Listen serves l on in and out with at most limit requests but
// tools/call in flight (see [Stdio]): mcpgo.ServeStdio's loop, which the
// tests run on pipes.
func Listen(ctx context.Context, l Listener, in io.Reader, out io.Writer, limit int) error {
	r, w := Stdio(ctx, in, out, limit)
	return l.Listen(ctx, r, w)
}

// inflight holds the places of the requests read whose answers are not
// written yet, by id: a list for each, since a client may reuse an id.
type inflight struct {
	ctx    context.Context
	limit  int
	places *Admission
	mu     sync.Mutex
	held   map[string][]*Ticket // request id (as encoding/json writes it) → the places of its requests
}

// admit waits for a place for a request of id, and takes it; it gives up
// when the server stops.
func (g *inflight) admit(id string) {
	t, err := g.places.Enter(g.ctx, Request{Limit: g.limit, Wait: -1})
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
