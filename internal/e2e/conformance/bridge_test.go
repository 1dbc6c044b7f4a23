package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
)

// bridge serves streamable HTTP in front of a stdio MCP server: the
// conformance suite tests HTTP servers, and lro-proxy speaks stdio to its
// client. Each MCP session (an initialize without Mcp-Session-Id) starts its
// own child, so the suite's scenarios never share a server's state. The
// bridge is the same for the stdio server alone and for lro-proxy in front
// of it, so whatever it lacks shows on both sides of the comparison.
type bridge struct {
	argv   []string
	env    []string
	stderr io.Writer // the children's stderr, kept for a failing test's log

	mu       sync.Mutex
	sessions map[string]*session
	next     atomic.Int64
}

// session is one child and the HTTP streams that carry its messages.
type session struct {
	cmd   *exec.Cmd
	wmu   sync.Mutex // one line at a time on stdin
	stdin io.WriteCloser

	mu         sync.Mutex
	byID       map[string]*stream // open POST streams by their request's id
	byToken    map[string]*stream // and by the progress token it carried
	open       []*stream          // open POST streams, oldest first
	standalone *stream            // the GET stream, if one is open
	queue      [][]byte           // server messages no stream could carry yet
	exited     bool
}

// stream is one SSE response; nil on msgs ends it.
type stream struct{ msgs chan []byte }

func newStream() *stream { return &stream{msgs: make(chan []byte, 4096)} }

func (b *bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !localRequest(r) {
		http.Error(w, "forbidden Host or Origin", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		b.post(w, r)
	case http.MethodGet:
		b.get(w, r)
	case http.MethodDelete:
		if s := b.session(r.Header.Get("Mcp-Session-Id")); s != nil {
			b.mu.Lock()
			delete(b.sessions, r.Header.Get("Mcp-Session-Id"))
			b.mu.Unlock()
			s.stop()
		}
		w.WriteHeader(http.StatusOK)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// localRequest guards against DNS rebinding as a local server must: the
// Host and any Origin name this machine.
func localRequest(r *http.Request) bool {
	local := func(hostport string) bool {
		host := hostport
		if h, _, err := net.SplitHostPort(hostport); err == nil {
			host = h
		}
		return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]"
	}
	if !local(r.Host) {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		rest, ok := strings.CutPrefix(o, "http://")
		if !ok {
			return false
		}
		return local(rest)
	}
	return true
}

func (b *bridge) session(id string) *session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessions[id]
}

// message is the part of a JSON-RPC message the bridge routes by.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Meta          struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

func (b *bridge) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var line bytes.Buffer
	if err := json.Compact(&line, body); err != nil || !bytes.HasPrefix(line.Bytes(), []byte("{")) {
		http.Error(w, "want one JSON-RPC message as a JSON object", http.StatusBadRequest)
		return
	}
	var m message
	if err := json.Unmarshal(line.Bytes(), &m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	var s *session
	switch {
	case sid == "" && m.Method == "initialize":
		sid = fmt.Sprintf("bridge-%d", b.next.Add(1))
		if s, err = b.start(sid); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	case sid == "":
		http.Error(w, "missing Mcp-Session-Id", http.StatusBadRequest)
		return
	default:
		if s = b.session(sid); s == nil {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
	}
	if m.Method == "" || len(m.ID) == 0 { // a notification, or the client's answer
		if err := s.send(line.Bytes()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	st := newStream()
	s.mu.Lock()
	if s.exited {
		s.mu.Unlock()
		http.Error(w, "the server exited", http.StatusInternalServerError)
		return
	}
	id := string(m.ID)
	s.byID[id] = st
	token := m.Params.Meta.ProgressToken
	if len(token) > 0 {
		s.byToken[string(token)] = st
	}
	s.open = append(s.open, st)
	s.mu.Unlock()
	if err := s.send(line.Bytes()); err != nil {
		s.drop(st)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Mcp-Session-Id", sid)
	w.WriteHeader(http.StatusOK)
	serveSSE(w, r, st)
	s.drop(st)
}

func (b *bridge) get(w http.ResponseWriter, r *http.Request) {
	s := b.session(r.Header.Get("Mcp-Session-Id"))
	if s == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	st := newStream()
	s.mu.Lock()
	if s.standalone != nil || s.exited {
		s.mu.Unlock()
		http.Error(w, "a GET stream is already open", http.StatusConflict)
		return
	}
	s.standalone = st
	for _, q := range s.queue {
		st.msgs <- q
	}
	s.queue = nil
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	serveSSE(w, r, st)
	s.drop(st)
}

// serveSSE writes the stream's messages as SSE events until it ends or the
// client goes.
func serveSSE(w http.ResponseWriter, r *http.Request, st *stream) {
	f, _ := w.(http.Flusher)
	if f != nil {
		f.Flush()
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case m := <-st.msgs:
			if m == nil {
				return
			}
			if _, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", m); err != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		}
	}
}

// start runs the child of a new session and routes what it writes.
func (b *bridge) start(sid string) (*session, error) {
	cmd := exec.Command(b.argv[0], b.argv[1:]...)
	cmd.Env = append(os.Environ(), b.env...)
	cmd.Stderr = b.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &session{cmd: cmd, stdin: stdin, byID: map[string]*stream{}, byToken: map[string]*stream{}}
	b.mu.Lock()
	if b.sessions == nil {
		b.sessions = map[string]*session{}
	}
	b.sessions[sid] = s
	b.mu.Unlock()
	go s.read(stdout)
	return s, nil
}

func (s *session) send(line []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.stdin.Write(append(append([]byte{}, line...), '\n'))
	return err
}

// read routes each line of the child: a response ends its request's
// stream; a server request or notification goes on the stream of the
// request it belongs to when its progress token says so, else on the newest
// open POST stream, else on the GET stream, else waits for one.
func (s *session) read(stdout io.Reader) {
	rd := bufio.NewReaderSize(stdout, 1<<20)
	for {
		line, err := rd.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			s.route(line)
		}
		if err != nil {
			break
		}
	}
	_ = s.cmd.Wait()
	s.mu.Lock()
	s.exited = true
	for _, st := range s.open {
		st.msgs <- nil
	}
	if s.standalone != nil {
		s.standalone.msgs <- nil
	}
	s.open, s.byID, s.byToken, s.standalone = nil, map[string]*stream{}, map[string]*stream{}, nil
	s.mu.Unlock()
}

func (s *session) route(line []byte) {
	var m message
	if json.Unmarshal(line, &m) != nil {
		return // not MCP: a stdio server's stray output
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Method == "" && len(m.ID) > 0 {
		if st := s.byID[string(m.ID)]; st != nil {
			st.msgs <- line
			st.msgs <- nil
			s.forget(st)
		}
		return
	}
	if tok := m.Params.ProgressToken; len(tok) > 0 {
		if st := s.byToken[string(tok)]; st != nil {
			st.msgs <- line
			return
		}
	}
	switch {
	case len(s.open) > 0:
		s.open[len(s.open)-1].msgs <- line
	case s.standalone != nil:
		s.standalone.msgs <- line
	default:
		s.queue = append(s.queue, line)
	}
}

// forget removes a stream from the routes; s.mu is held.
func (s *session) forget(st *stream) {
	for id, x := range s.byID {
		if x == st {
			delete(s.byID, id)
		}
	}
	for tok, x := range s.byToken {
		if x == st {
			delete(s.byToken, tok)
		}
	}
	for i, x := range s.open {
		if x == st {
			s.open = append(s.open[:i:i], s.open[i+1:]...)
			break
		}
	}
	if s.standalone == st {
		s.standalone = nil
	}
}

func (s *session) drop(st *stream) {
	s.mu.Lock()
	s.forget(st)
	s.mu.Unlock()
}

func (s *session) stop() {
	_ = s.stdin.Close()
	_ = s.cmd.Process.Kill()
}

// Close ends every child.
func (b *bridge) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, s := range b.sessions {
		s.stop()
		delete(b.sessions, id)
	}
}
