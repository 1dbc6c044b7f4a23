package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/mcpgo"
)

// A local server (Config.Command) is relayed message by message: the
// client's stdin goes to the server's stdin and the server's stdout to the
// client's stdout, unchanged, ids and all, so that everything MCP has
// (resources, prompts, completions, logging, progress, cancellation, the
// server's requests to the client: sampling, elicitation, roots) passes
// as the two sides wrote it, including what neither the proxy nor mcp-go
// knows yet. The proxy steps in for a few methods only:
//
//   - initialize: the client's request goes on with clientInfo.proxy = true
//     and the proxy capability; the server's answer comes back with the
//     tools and resources capabilities added when the proxy serves
//     lro_extract and the lro:// resources;
//   - tools/list: each page comes back with the output schemas of the
//     tools whose results are offloaded widened to admit the descriptor,
//     and lro_extract added to the last page;
//   - tools/call: the server's result is judged by the Offloader (through
//     the local mcp-go server, so that hooks, middleware and guidance are
//     those of any lro server); lro_extract is answered locally;
//   - resources/list and resources/templates/list: the lro:// templates are
//     added to the last page; resources/read of an lro:// URI is answered
//     locally.
//
// Why not mcp-go's stdio client: it reads a line with
// bufio.Reader.ReadString, without bound (a server that floods stdout
// grows the proxy without bound: one line of 256 MiB took its transport
// 3.8 s and 1028 MiB of heap, where the relay skips it in 0.1 s holding
// 5 MiB, TestChildFloodIsBounded), and it types every message it relays,
// which loses what its types do not model and every method it does not
// know. The relay reads a line of at most MaxResponseBytes (lineReader),
// decodes only the id and method of a message, and the results of
// tools/call once.

// childConfig is the resolved Config.Command.
type childConfig struct {
	path   string
	args   []string
	name   string // the command line, for messages
	stderr io.Writer
}

const (
	// DefaultStopGrace is how long a Command has to exit once its stdin
	// is closed, and again after SIGTERM, before it is killed, when
	// Config.StopGrace is zero.
	DefaultStopGrace = 2 * time.Second
	// noticeTimeout bounds telling the server that a request is
	// cancelled: a server that stops reading holds the proxy no longer.
	noticeTimeout = 2 * time.Second
	// maxLocalRequests bounds the client's requests the proxy handles
	// itself at once (tools/call, listings); the client's next message
	// waits for a place.
	maxLocalRequests = 32
)

// newChild returns a proxy of the local server cfg.Command.
func newChild(off *lro.Offloader, cfg Config, opts []server.ServerOption) (*Proxy, error) {
	if cfg.Command[0] == "" {
		return nil, errors.New("lro: proxy: the server command is empty")
	}
	path, err := exec.LookPath(cfg.Command[0])
	if err != nil {
		return nil, fmt.Errorf("lro: proxy: the server command %q cannot be run: %w", cfg.Command[0], err)
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 5 * time.Minute
	}
	p := &Proxy{cfg: cfg, off: off, log: cfg.Logger, warned: map[string]bool{}, served: map[string]string{}}
	p.lim = resolveLimits(cfg)
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	name := strings.Join(cfg.Command, " ")
	if len(name) > 200 {
		name = name[:200] + "..."
	}
	p.child = &childConfig{path: path, args: cfg.Command[1:], name: name, stderr: cfg.Stderr}
	if p.child.stderr == nil {
		p.child.stderr = os.Stderr
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	all := append([]server.ServerOption{server.WithToolCapabilities(true), server.WithRecovery(), mcpgo.ServerOption(off)}, opts...)
	p.front = server.NewMCPServer("lro-proxy", "0.1.0", all...)
	if cfg.Extract {
		mcpgo.AddExtractTool(p.front, off)
	}
	return p, nil
}

// Serve serves one client on in and out: the client's stdio. It returns
// when in ends (the client disconnected), when ctx is done or the Proxy
// is closed, or when a Command exits.
//
// With a Command, Serve starts it (with the proxy's environment and
// working directory, its stderr to Config.Stderr), relays all of MCP
// between the client and it, and ends it before it returns: its stdin is
// closed, then its process group gets SIGTERM and, after
// [Config.StopGrace] (two seconds) more, SIGKILL, even when the server
// itself has exited by then (what it left in its group is ended too). On Linux the kernel kills the server, not its
// descendants, if the proxy dies first (see the package documentation).
// When the server exits by itself, its group is ended the same way, the
// calls waiting for it get an error that says
// so and Serve returns a [*ServerExitError]: the proxy does not restart it,
// since a new process would not know the client (its initialize, its
// subscriptions, its roots), and the client's host restarts the proxy
// whole with a clear error in its log.
//
// With a Remote, Serve is mcp-go's stdio server of [Proxy.Server], but
// for the remote's prompts, resources, templates, completions and
// subscriptions, which it relays as JSON, as the remote sent them (a
// local server's answers would drop what mcp-go's types do not model).
// At most 32 such requests are relayed at once.
func (p *Proxy) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	if p.child == nil {
		return p.serveRemote(ctx, in, out)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.ctx, cancel)()
	r := newRelay(p, out)
	if err := r.start(); err != nil {
		return err
	}
	return r.run(ctx, in)
}

// A ServerExitError reports that the local server (Config.Command)
// exited while the proxy served its client.
type ServerExitError struct {
	// Command is the server's command line.
	Command string
	// Err is what its exit returned: an *exec.ExitError, or nil for an
	// exit with status 0.
	Err error
}

// Error names the server and how it ended.
func (e *ServerExitError) Error() string {
	how := "exited with status 0"
	if e.Err != nil {
		how = "exited: " + e.Err.Error()
	}
	return fmt.Sprintf("lro: proxy: the server %q %s", e.Command, how)
}

// Unwrap returns Err.
func (e *ServerExitError) Unwrap() error { return e.Err }

// errChildStopping is what calls get while the proxy ends the server.
var errChildStopping = errors.New("lro: proxy: the proxy is stopping the server (the client disconnected)")

// relay is one Serve of a local server.
type relay struct {
	p    *Proxy
	cmd  *exec.Cmd
	in   *os.File      // the server's stdin
	inMu chan struct{} // held while a message is written to in
	pr   *os.File      // the server's stdout

	out   io.Writer // the client's stdout
	outMu sync.Mutex

	exited  chan struct{} // closed when the server has exited
	eof     chan struct{} // closed when its stdout has ended
	exitErr error         // set before exited is closed

	sess *relaySession
	sem  chan struct{}
	wg   sync.WaitGroup
	work chan func()   // hands a request to an idle worker (see worker)
	quit chan struct{} // closed when run ends: the idle workers exit
	sbuf []byte        // the message being written to in, held with inMu
	obuf []byte        // the message being written to out, held with outMu

	mu        sync.Mutex
	pending   map[string]*pending        // the client's requests sent to the server, by id
	localReqs map[string]*localRequest   // the client's requests the proxy handles, by id
	dead      error                      // set once the server is gone: no more requests
	caps      map[string]json.RawMessage // the server's capabilities, once initialized
	listed    toolListing                // the client's listing of the server's tools in progress
	changeDue bool                       // a tool list change is to be told to the client (see changedTools)
	workers   int                        // workers started (see worker)
}

// pending is a request of the client sent to the server.
type pending struct {
	method string
	resp   chan delivery // nil: the answer goes to the client as it comes
	timer  *time.Timer   // with resp nil: the call's timeout
}

// delivery is the server's answer to a request the proxy handles.
type delivery struct {
	line []byte
	err  error
}

// localRequest is a request of the client that the proxy handles.
type localRequest struct {
	cancel    context.CancelFunc
	cancelled bool // by the client: it wants no answer
}

func newRelay(p *Proxy, out io.Writer) *relay {
	return &relay{
		p: p, out: out,
		inMu:      make(chan struct{}, 1),
		exited:    make(chan struct{}),
		eof:       make(chan struct{}),
		sem:       make(chan struct{}, maxLocalRequests),
		work:      make(chan func()),
		quit:      make(chan struct{}),
		pending:   map[string]*pending{},
		localReqs: map[string]*localRequest{},
		sess:      newRelaySession(),
	}
}

// start starts the server.
func (r *relay) start() error {
	c := r.p.child
	r.cmd = exec.Command(c.path, c.args...)
	r.cmd.Stderr = c.stderr
	r.cmd.WaitDelay = DefaultStopGrace // a descendant holding stderr open does not hold Wait
	childAttr(r.cmd)
	// The proxy's own pipes, not StdinPipe and StdoutPipe: Wait must not
	// close stdout under the reader while the server's last answers are
	// still in it, and a write to stdin takes a deadline.
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("lro: proxy: starting the server %q: %w", c.name, err)
	}
	cr, cw, err := os.Pipe()
	if err != nil {
		pr.Close()
		pw.Close()
		return fmt.Errorf("lro: proxy: starting the server %q: %w", c.name, err)
	}
	r.cmd.Stdout, r.cmd.Stdin = pw, cr
	// Pdeathsig fires when the thread that started the server ends, not
	// the process: the goroutine that starts it keeps its thread until the
	// server has exited (Go ends no thread of its own but a locked one).
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := r.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		r.exitErr = r.cmd.Wait()
		close(r.exited)
	}()
	err = <-started
	pw.Close()
	cr.Close()
	if err != nil {
		pr.Close()
		cw.Close()
		return fmt.Errorf("lro: proxy: starting the server %q: %w", c.name, err)
	}
	r.in, r.pr = cw, pr
	r.p.log.Info("lro proxy: started the server", "command", c.name, "pid", r.cmd.Process.Pid)
	return nil
}

// run relays until the client disconnects, ctx ends or the server exits.
func (r *relay) run(ctx context.Context, in io.Reader) error {
	front := r.p.front
	if err := front.RegisterSession(ctx, r.sess); err != nil {
		r.stop()
		return fmt.Errorf("lro: proxy: %w", err)
	}
	defer front.UnregisterSession(context.Background(), r.sess.SessionID())
	go r.readChild()
	go r.notifyClient(ctx)
	clientDone := make(chan error, 1)
	go func() { clientDone <- r.readClient(ctx, in) }()

	var err error
	select {
	case err = <-clientDone:
		r.p.log.Info("lro proxy: the client disconnected; stopping the server", "command", r.p.child.name)
		r.stop()
		r.failAll(errChildStopping)
	case <-ctx.Done():
		r.stop()
		r.failAll(errChildStopping)
	case <-r.exited:
		// Its last answers may still be in the pipe (a descendant holding
		// it open holds this wait, whatever the grace of the signals).
		select {
		case <-r.eof:
		case <-time.After(DefaultStopGrace):
		}
		err = &ServerExitError{Command: r.p.child.name, Err: r.exitErr}
		r.failAll(err)
		r.p.log.Error("lro proxy: the server exited", "command", r.p.child.name, "error", r.exitErr)
		r.endGroup()
	}
	r.pr.Close()
	r.wg.Wait()
	close(r.quit)
	return err
}

// stop ends the server: its stdin closed, then SIGTERM to its process
// group, then SIGKILL, the grace (Config.StopGrace) apart; what it leaves behind in its
// group is ended too (see endGroup).
func (r *relay) stop() {
	r.in.Close()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-r.exited:
			r.endGroup()
			return
		case <-time.After(r.p.stopGrace()):
		}
		// A server that stays after the end of its input is ordinary (the
		// MCP shutdown sequence goes on to SIGTERM); one that stays after
		// SIGTERM is not.
		level, why := slog.LevelInfo, "when its input ended"
		if sig == syscall.SIGKILL {
			level, why = slog.LevelWarn, "after SIGTERM"
		}
		r.p.log.Log(context.Background(), level, "lro proxy: the server did not exit "+why+"; signalling it", "command", r.p.child.name, "signal", sig)
		signalGroup(r.cmd, sig)
	}
	select {
	case <-r.exited:
	case <-time.After(DefaultStopGrace): // the kernel's time, not the server's
		r.p.log.Error("lro proxy: the server did not exit after SIGKILL", "command", r.p.child.name)
	}
}

// endGroup ends what the server, which has exited, left behind in its
// process group: SIGTERM, then SIGKILL to whatever is still there after
// the grace. A descendant that ignores SIGTERM (a server started by a
// wrapper, npx or uvx, that exits first) would otherwise outlive the
// proxy. A descendant that left the group (setsid) is not reached.
func (r *relay) endGroup() {
	signalGroup(r.cmd, syscall.SIGTERM)
	if r.groupGone() {
		return
	}
	r.p.log.Warn("lro proxy: what the server left behind did not exit; killing its process group", "command", r.p.child.name)
	signalGroup(r.cmd, syscall.SIGKILL)
}

// groupGone waits up to the grace for the server's process group to be
// empty, and reports whether it is.
func (r *relay) groupGone() bool {
	deadline := time.Now().Add(r.p.stopGrace())
	for groupAlive(r.cmd) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// failAll answers every request waiting for the server with err, and
// takes no more.
func (r *relay) failAll(err error) {
	r.mu.Lock()
	r.dead = err
	waiting := r.pending
	r.pending = map[string]*pending{}
	r.mu.Unlock()
	for id, pd := range waiting {
		if pd.resp != nil {
			pd.resp <- delivery{err: err}
			continue
		}
		pd.timer.Stop()
		r.writeError([]byte(id), mcp.INTERNAL_ERROR, r.failure(pd.method, err))
	}
}

// send writes line to the server's stdin, one message at a time, within
// ctx's deadline: a server that stops reading holds its senders no longer
// than their calls' timeouts.
func (r *relay) send(ctx context.Context, line []byte) error {
	select {
	case r.inMu <- struct{}{}:
	case <-r.exited:
		return &ServerExitError{Command: r.p.child.name, Err: r.exitErr}
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.inMu }()
	deadline, _ := ctx.Deadline() // zero: none
	_ = r.in.SetWriteDeadline(deadline)
	var err error
	r.sbuf, err = writeLine(r.in, r.sbuf, line)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return context.DeadlineExceeded
	}
	if err != nil {
		select {
		case <-r.exited:
			return &ServerExitError{Command: r.p.child.name, Err: r.exitErr}
		default:
			return fmt.Errorf("lro: proxy: writing to the server: %w", err)
		}
	}
	return nil
}

// write writes one message to the client.
func (r *relay) write(line []byte) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	r.obuf, _ = writeLine(r.out, r.obuf, line)
}

// maxKeptLine is the largest line buffer writeLine keeps for the next
// message: a rare large message does not hold its memory for good.
const maxKeptLine = 64 << 10

// writeLine writes line and its newline to w in one Write, by way of buf,
// and returns buf to keep for the next line. One write a message, not
// two: each write to a pipe may wake its reader, and the reader of the
// line alone (mcp-go's, Node's readline) wakes again for the newline,
// which cost a small call through the proxy a system call and a context
// switch at each of its two hops.
func writeLine(w io.Writer, buf, line []byte) ([]byte, error) {
	buf = append(append(buf[:0], line...), '\n')
	_, err := w.Write(buf)
	if cap(buf) > maxKeptLine {
		buf = nil
	}
	return buf, err
}

// writeError answers the request id (JSON) with a JSON-RPC error.
func (r *relay) writeError(id []byte, code int, msg string) {
	r.write(errorMessage(id, code, msg, r.p.lim.errText))
}

// header is what the relay reads of every message of the client (see
// peekHeader).
type header struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
}

func (h *header) isRequest() bool { return h.Method != "" && len(h.ID) > 0 && string(h.ID) != "null" }

// readChild relays the server's messages: its answers to the requests
// that wait for them, its requests and notifications to the client.
func (r *relay) readChild() {
	defer close(r.eof)
	lr := newLineReader(r.pr, r.p.lim.response)
	for {
		line, long, err := lr.next()
		if err != nil {
			return
		}
		if long != nil {
			r.childTooLong(long)
			continue
		}
		id, method, _, ok := peekHeader(line)
		if !ok {
			r.p.warnOnce("child not json", "lro proxy: the server wrote a line that is not a JSON-RPC message; dropped", "command", r.p.child.name, "line", proxyClip(string(line), 200))
			continue
		}
		if method != nil {
			if methodName(method) == string(mcp.MethodNotificationToolsListChanged) {
				r.changedTools(line)
				continue
			}
			if line = r.boundAskLine(id, methodName(method), line); line == nil {
				continue
			}
			if lim := r.p.lim.notify; lim > 0 && int64(len(line)) > lim && (len(id) == 0 || string(id) == "null") {
				if line = r.p.boundNotification(line); line == nil {
					continue
				}
			}
			r.write(line) // its request or notification
			continue
		}
		r.answer(id, delivery{line: line})
	}
}

// answer hands d, the server's answer to the request id, to what waits
// for it.
func (r *relay) answer(id json.RawMessage, d delivery) {
	r.mu.Lock()
	pd := r.pending[string(id)]
	delete(r.pending, string(id))
	r.mu.Unlock()
	switch {
	case pd == nil:
		r.p.log.Debug("lro proxy: an answer of the server to no request waiting (timed out?); dropped", "id", proxyClip(string(id), 100))
	case pd.resp != nil:
		pd.resp <- d
	case d.err != nil:
		pd.timer.Stop()
		r.writeError(id, mcp.INTERNAL_ERROR, r.failure(pd.method, d.err))
	default:
		pd.timer.Stop()
		r.write(d.line)
	}
}

// childTooLong fails the request a message past MaxResponseBytes answers,
// when its ends tell which.
func (r *relay) childTooLong(long *longLine) {
	err := &RemoteLimitError{Limit: "MaxResponseBytes", Bytes: r.p.lim.response}
	id := long.id()
	r.mu.Lock()
	_, waiting := r.pending[string(id)]
	r.mu.Unlock()
	if id == nil || !waiting {
		r.p.log.Warn("lro proxy: the server wrote a message larger than the proxy's limit; dropped", "command", r.p.child.name, "bytes", long.size, "limit", "MaxResponseBytes")
		return
	}
	r.answer(id, delivery{err: err})
}

// failure says why the request method failed with err.
func (r *relay) failure(method string, err error) string {
	name := r.p.child.name
	var lim *RemoteLimitError
	var exit *ServerExitError
	switch {
	case errors.As(err, &lim) && lim.Limit == "MaxToolsBytes":
		return fmt.Sprintf("the server %q lists tools larger together than the proxy's limit of %s (MaxToolsBytes; lro-proxy -max-tools-bytes); the proxy refused the listing and serves the tools it had",
			name, proxySize(lim.Bytes))
	case errors.As(err, &lim):
		return fmt.Sprintf("the server %q sent an answer to %s larger than the proxy's limit of %s (MaxResponseBytes; lro-proxy -max-response-bytes); the proxy stopped reading it. Ask for less (fewer results, a narrower query), or raise the limit.",
			name, method, proxySize(lim.Bytes))
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("the server %q did not answer %s within %s (lro-proxy -timeout); the proxy cancelled the request", name, method, r.p.cfg.CallTimeout)
	case errors.As(err, &exit):
		return fmt.Sprintf("the server %q exited before answering %s (%v); the proxy is stopping", name, method, exit.Err)
	case errors.Is(err, errChildStopping):
		return fmt.Sprintf("the server %q is being stopped: the client disconnected", name)
	}
	return fmt.Sprintf("the server %q, %s: %v", name, method, err)
}

// readClient relays the client's messages until its stdin ends.
func (r *relay) readClient(ctx context.Context, in io.Reader) error {
	lr := newLineReader(in, max(r.p.lim.response, 0))
	for {
		line, long, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if long != nil {
			if id := long.id(); id != nil {
				r.writeError(id, mcp.INVALID_REQUEST, fmt.Sprintf("lro-proxy: the request is larger than the proxy's limit of %s (lro-proxy -max-response-bytes)", proxySize(r.p.lim.response)))
			}
			continue
		}
		id, method, params, ok := peekHeader(line)
		if !ok || (method != nil && methodName(method) == "") {
			r.writeError([]byte("null"), mcp.PARSE_ERROR, "lro-proxy: a message that is not a JSON-RPC message")
			continue
		}
		h := header{ID: id, Method: methodName(method), Params: params}
		switch {
		case h.Method == "":
			_ = r.send(ctx, line) // the client's answer to a request of the server
		case !h.isRequest():
			r.clientNotification(ctx, &h, line)
		default:
			r.clientRequest(ctx, &h, line)
		}
	}
}

// clientNotification relays a notification of the client, and notes
// what it says to the proxy.
func (r *relay) clientNotification(ctx context.Context, h *header, line []byte) {
	switch h.Method {
	case string(mcp.MethodNotificationInitialized):
		r.sess.Initialize()
	case "notifications/cancelled":
		var params struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(h.Params, &params) == nil {
			id := string(params.RequestID)
			r.mu.Lock()
			if lr := r.localReqs[id]; lr != nil {
				lr.cancelled = true
				lr.cancel()
			}
			// A relayed request the client gave up: no answer, no
			// timeout error, for it.
			if pd := r.pending[id]; pd != nil && pd.resp == nil {
				pd.timer.Stop()
				delete(r.pending, id)
			}
			r.mu.Unlock()
		}
	}
	_ = r.send(ctx, line)
}

// clientRequest relays a request of the client, or handles it.
func (r *relay) clientRequest(ctx context.Context, h *header, line []byte) {
	if r.inFlight(h.ID) {
		// Its answer would go to whichever of the two asked first, and the
		// other would wait for its timeout.
		r.writeError(h.ID, mcp.INVALID_REQUEST, fmt.Sprintf("lro-proxy: the request id %s is in flight already (a request of the client with that id has not been answered yet); send each request with an id of its own", proxyClip(string(h.ID), 100)))
		return
	}
	switch h.Method {
	case string(mcp.MethodInitialize), string(mcp.MethodServerDiscover), string(mcp.MethodToolsList), string(mcp.MethodToolsCall),
		string(mcp.MethodResourcesList), string(mcp.MethodResourcesTemplatesList), string(mcp.MethodTasksResult),
		string(mcp.MethodPromptsGet), string(mcp.MethodResourcesRead):
		// prompts/get and the server's resources/read: their results pass
		// the exit gate (see relayed.go).
	default:
		r.forward(ctx, h, line)
		return
	}
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	cctx, cancel := context.WithTimeout(ctx, r.p.cfg.CallTimeout)
	lr := &localRequest{cancel: cancel}
	r.mu.Lock()
	if err := r.dead; err != nil {
		// Stopping: run waits for the requests in flight, and takes no more.
		r.mu.Unlock()
		cancel()
		<-r.sem
		r.writeError(h.ID, mcp.INTERNAL_ERROR, r.failure(h.Method, err))
		return
	}
	r.localReqs[string(h.ID)] = lr
	r.wg.Add(1)
	r.mu.Unlock()
	job := func() {
		defer r.wg.Done()
		defer func() { <-r.sem }()
		defer cancel()
		resp := r.handle(cctx, h, line)
		r.mu.Lock()
		delete(r.localReqs, string(h.ID))
		cancelled := lr.cancelled
		r.mu.Unlock()
		if resp != nil && !cancelled {
			r.write(resp)
		}
	}
	select {
	case r.work <- job:
		return
	default:
	}
	r.mu.Lock()
	spawn := r.workers < maxLocalRequests
	if spawn {
		r.workers++
	}
	r.mu.Unlock()
	if spawn {
		go r.worker(job)
		return
	}
	// As many workers as requests may be in flight (sem): one is done,
	// or about to take a job.
	r.work <- job
}

// inFlight reports whether a request of the client with the id is in
// flight: sent to the server, or being handled by the proxy. Only the
// client's reader registers requests, so what it is told holds until it
// registers the next.
func (r *relay) inFlight(id json.RawMessage) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, local := r.localReqs[string(id)]
	_, sent := r.pending[string(id)]
	return local || sent
}

// worker runs job, then each job handed to it while it is idle, until
// the relay ends. The proxy keeps its workers rather than start a
// goroutine a request: a tools/call runs deep (mcp-go's handler, its
// middleware, the Offloader), and each new goroutine grew its stack to
// that depth by copying it, again and again, which cost a small call a
// quarter of the proxy's CPU. An idle worker holds nothing of its last
// job (job is dead while it waits; TestChildIdleWorkersKeepNoRequest).
func (r *relay) worker(job func()) {
	for {
		job()
		select {
		case job = <-r.work:
		case <-r.quit:
			return
		}
	}
}

// forward sends a request of the client to the server; the answer goes
// back as it comes, or an error after CallTimeout.
func (r *relay) forward(ctx context.Context, h *header, line []byte) {
	id := string(h.ID)
	pd := &pending{method: h.Method}
	r.mu.Lock()
	if err := r.dead; err != nil {
		r.mu.Unlock()
		r.writeError(h.ID, mcp.INTERNAL_ERROR, r.failure(h.Method, err))
		return
	}
	r.pending[id] = pd
	pd.timer = time.AfterFunc(r.p.cfg.CallTimeout, func() { r.expire(id, pd) })
	r.mu.Unlock()
	if err := r.send(ctx, announced(line)); err != nil {
		r.answer(h.ID, delivery{err: err})
	}
}

// expire answers the request id, still unanswered after CallTimeout, with
// an error, and tells the server it is cancelled.
func (r *relay) expire(id string, pd *pending) {
	r.mu.Lock()
	if r.pending[id] != pd {
		r.mu.Unlock()
		return // answered meanwhile
	}
	delete(r.pending, id)
	r.mu.Unlock()
	r.writeError([]byte(id), mcp.INTERNAL_ERROR, r.failure(pd.method, context.DeadlineExceeded))
	r.cancelChild([]byte(id))
}

// cancelChild tells the server that the request id is cancelled.
func (r *relay) cancelChild(id []byte) {
	b := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"lro-proxy: timed out after %s"}}`, id, r.p.cfg.CallTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), noticeTimeout)
	defer cancel()
	_ = r.send(ctx, b)
}

// call sends line, the request id of the client, to the server, and
// returns its answer.
func (r *relay) call(ctx context.Context, id json.RawMessage, method string, line []byte) ([]byte, error) {
	pd := &pending{method: method, resp: make(chan delivery, 1)}
	r.mu.Lock()
	if err := r.dead; err != nil {
		r.mu.Unlock()
		return nil, err
	}
	r.pending[string(id)] = pd
	r.mu.Unlock()
	if err := r.send(ctx, announced(line)); err != nil {
		r.drop(id, pd)
		return nil, err
	}
	select {
	case d := <-pd.resp:
		return d.line, d.err
	case <-ctx.Done():
		if r.drop(id, pd) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			r.cancelChild(id)
		}
		return nil, ctx.Err()
	}
}

// drop forgets the request id waiting as pd, and reports whether it was
// still waiting.
func (r *relay) drop(id json.RawMessage, pd *pending) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending[string(id)] != pd {
		return false
	}
	delete(r.pending, string(id))
	return true
}
