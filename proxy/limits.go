package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro/internal/setting"
)

// The proxy's bounds on what the remote sends. mcp-go's client reads
// whatever comes: a whole response body into memory (a 500 MB response
// cost 3 GiB), a whole SSE event however many lines it spans (joining
// them is quadratic: a 5 MB event in 50,000 lines took over a minute of
// CPU), and a whole error body into the error text the model sees. The
// proxy's HTTP transport therefore bounds each response body before
// mcp-go reads it:
//
//   - a JSON response, or the whole event stream answering one request,
//     stops at MaxResponseBytes;
//   - one SSE event stops at MaxEventBytes, on every stream, the
//     long-lived notification streams included;
//   - the body of an HTTP error is cut at MaxErrorBytes, with a note.
//
// Past a limit the read fails, and the call gets a tool error that names
// the limit ([RemoteLimitError]). The transport also rewrites each SSE
// event so that its data comes in one "data:" line, which mcp-go reads in
// linear time (see sseLimiter).

const (
	// DefaultMaxResponseBytes is the most the proxy reads of one
	// response of the remote unless [Config.MaxResponseBytes] says
	// otherwise: 64 MiB, millions of tokens, far more than a model reads
	// inline, and a quarter of what lro_extract reads of a file. The
	// proxy holds a response a few times over while it decodes and
	// offloads it (about six times its size at the peak).
	DefaultMaxResponseBytes = 64 << 20
	// DefaultMaxErrorBytes is the most of a remote's error text the
	// model sees unless [Config.MaxErrorBytes] says otherwise: 8 KiB,
	// a long stack trace, or about 2,000 tokens.
	DefaultMaxErrorBytes = 8 << 10
	// DefaultMaxToolsBytes is the largest tool listing of the remote the
	// proxy takes unless [Config.MaxToolsBytes] says otherwise: 4 MiB, a
	// thousand tools of 4 KiB, more than any model's context holds.
	DefaultMaxToolsBytes = 4 << 20

	// proxyMaxHeaderBytes bounds the remote's response headers (Go's
	// default is 10 MiB).
	proxyMaxHeaderBytes = 1 << 20
)

// A RemoteLimitError reports a response of the remote that the proxy
// stopped reading at one of its limits, or a tool listing it refused. A
// tool call that meets one gets a tool error saying so; a refused listing
// is logged, and fails [New] when it is the first.
type RemoteLimitError struct {
	// Limit is the name of the [Config] field that was exceeded:
	// "MaxResponseBytes", "MaxEventBytes" or "MaxToolsBytes".
	Limit string
	// Bytes is the limit's value.
	Bytes int64
}

// Error says which of the remote's responses met which limit.
func (e *RemoteLimitError) Error() string {
	return fmt.Sprintf("lro: proxy: the remote's %s is larger than the proxy's limit of %s (%s); the proxy stopped reading it",
		e.what(), proxySize(e.Bytes), e.Limit)
}

func (e *RemoteLimitError) what() string {
	switch e.Limit {
	case "MaxEventBytes":
		return "server-sent event"
	case "MaxToolsBytes":
		return "tool listing"
	}
	return "response"
}

// proxySize writes n bytes for people: "64 MiB", "8 KiB", "1000 bytes".
func proxySize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// proxyLimits are a proxy's limits, resolved: 0 means none.
type proxyLimits struct {
	response, event, errText, tools, notify int64
}

// resolveLimits turns cfg's limits, by the rule of every number in a
// Config (0: the default, negative: none), into proxyLimits'.
func resolveLimits(cfg Config) proxyLimits {
	var l proxyLimits
	l.response = setting.Resolve(cfg.MaxResponseBytes, DefaultMaxResponseBytes)
	l.event = setting.Resolve(cfg.MaxEventBytes, l.response)
	l.errText = setting.Resolve(cfg.MaxErrorBytes, DefaultMaxErrorBytes)
	l.tools = setting.Resolve(cfg.MaxToolsBytes, DefaultMaxToolsBytes)
	l.notify = setting.Resolve(cfg.MaxNotificationBytes, DefaultMaxNotificationBytes)
	return l
}

// stopGrace is Config.StopGrace, resolved: how long the server has to
// exit at each step of its ending.
func (p *Proxy) stopGrace() time.Duration {
	return setting.Resolve(p.cfg.StopGrace, DefaultStopGrace)
}

// remoteCallKey is the context key of the *remoteCall of a request.
type remoteCallKey struct{}

// remoteCall is what the HTTP transport learned while one JSON-RPC
// request went out: proxyTransport.SendRequest puts it in the request's
// context, limitTransport fills it in. mcp-go drops a read error of an SSE
// stream (it logs it and reports "unexpected nil response"), so the limit
// that stopped a read is kept here to be reported instead.
type remoteCall struct {
	longLived bool                 // a notification stream: no MaxResponseBytes
	raw       bool                 // a forwarded tools/call: its response takes the lean path (see proxy_raw.go)
	shed      func(msg []byte) int // see proxyTransport.shed

	mu        sync.Mutex
	limit     *RemoteLimitError
	status    int
	mediaType string
	challenge string              // WWW-Authenticate, which names a 401's authorization server
	taken     *mcp.CallToolResult // the result the lean path took
	shedded   int                 // the tokens of the _meta take dropped
}

func withRemoteCall(ctx context.Context, c *remoteCall) context.Context {
	return context.WithValue(ctx, remoteCallKey{}, c)
}

func (c *remoteCall) fail(err *RemoteLimitError) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit == nil {
		c.limit = err
	}
}

func (c *remoteCall) saw(status int, mediaType, challenge string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status, c.mediaType, c.challenge = status, mediaType, challenge
}

// outcome wraps err, the error mcp-go returned for the request, with what
// the transport saw: the limit that stopped a read, or the HTTP status or
// content type that tells a misconfigured remote from one that is down.
func (c *remoteCall) outcome(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err == nil:
		return nil // a limit met after the response does not undo it
	case c.limit != nil:
		return c.limit
	case c.status != 0 && c.status != http.StatusOK && c.status != http.StatusAccepted:
		return &remoteHTTPError{status: c.status, challenge: c.challenge, err: err}
	case c.status != 0 && c.mediaType != "application/json" && c.mediaType != "text/event-stream":
		return &remoteHTTPError{status: c.status, mediaType: c.mediaType, err: err}
	}
	return err
}

// remoteHTTPError is a request that the remote answered with an HTTP error
// status, or with a body that is neither JSON nor an event stream. It
// wraps mcp-go's error, so errors.Is still finds mcp-go's sentinels.
type remoteHTTPError struct {
	status    int
	mediaType string // set when the status was fine but the type was not
	challenge string // the WWW-Authenticate header of a 401 or 403
	err       error
}

func (e *remoteHTTPError) Error() string {
	if e.mediaType != "" || e.status == http.StatusOK || e.status == http.StatusAccepted {
		return fmt.Sprintf("the remote answered with content type %q, not JSON or an event stream: %v", e.mediaType, e.err)
	}
	return fmt.Sprintf("the remote answered HTTP %d %s: %v", e.status, http.StatusText(e.status), e.err)
}

func (e *remoteHTTPError) Unwrap() error { return e.err }

// newLimitClient returns the HTTP client of a proxy's upstream
// connections to remote, which follows redirects within remote's origin
// only (see sameOrigin).
//
// incoming, when not nil, is given each request of the remote to the
// client as it came on an event stream (see sseLimiter.flush); notice,
// each notification of the remote larger than lim.notify, and returns
// what mcp-go is to read of it (nil: nothing).
func newLimitClient(lim proxyLimits, remote *url.URL, incoming func(id json.RawMessage, msg []byte), notice func([]byte) []byte) *http.Client {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		base = &http.Transport{Proxy: http.ProxyFromEnvironment}
	} else {
		base = base.Clone()
	}
	base.MaxResponseHeaderBytes = proxyMaxHeaderBytes
	return &http.Client{
		Transport: &limitTransport{base: base, lim: lim, incoming: incoming, notice: notice},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !sameOrigin(req.URL, remote) {
				return &redirectError{to: req.URL.Redacted()}
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}
}

// sameOrigin reports whether u has the scheme, host and port of origin.
// The configured headers (credentials), the session id and the calls go
// to the configured origin only: net/http would follow a redirect
// anywhere, with every header but Authorization and Cookie, and a 307 or
// 308 with the request's body.
func sameOrigin(u, origin *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(u.Scheme, origin.Scheme) && strings.EqualFold(u.Hostname(), origin.Hostname()) && port(u) == port(origin)
}

// redirectError is a redirect of the remote to another origin, which the
// proxy does not follow.
type redirectError struct {
	to string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("the remote redirected to %s, another origin; the proxy does not follow it (the configured headers go to the configured origin only): if that server is the one you mean, set the remote URL to it", e.to)
}

// limitTransport bounds each response body of the remote before mcp-go
// reads it (see the top of this file).
type limitTransport struct {
	base     *http.Transport
	lim      proxyLimits
	incoming func(id json.RawMessage, msg []byte) // see newLimitClient
	notice   func([]byte) []byte                  // see newLimitClient
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	call, _ := req.Context().Value(remoteCallKey{}).(*remoteCall)
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	call.saw(resp.StatusCode, mediaType, resp.Header.Get("WWW-Authenticate"))
	// A GET is a notification stream (the older protocol's), as is
	// subscriptions/listen: they last, so only their events are bounded.
	longLived := req.Method == http.MethodGet || (call != nil && call.longLived)
	total := t.lim.response
	if longLived {
		total = 0
	}
	switch {
	case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted:
		// mcp-go reads these whole into its error text.
		resp.Body = &errorBody{src: resp.Body, max: t.lim.errText}
	case mediaType == "text/event-stream":
		sl := newSSELimiter(resp.Body, t.lim.event, total, call)
		sl.incoming = t.incoming
		if t.lim.notify > 0 {
			sl.notice, sl.maxNotice = t.notice, t.lim.notify
		}
		resp.Body = sl
	default:
		b := &limitedBody{src: resp.Body, max: total, call: call}
		if total > 0 && resp.ContentLength > total {
			b.refuse() // said in advance: read nothing
		}
		resp.Body = b
		if call != nil && call.raw && mediaType == "application/json" {
			resp.Body = &rawBody{src: b, call: call, size: resp.ContentLength}
		}
	}
	resp.ContentLength = -1 // the bodies above may differ from the length sent
	resp.Header.Del("Content-Length")
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// base transport.
func (t *limitTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// limitedBody fails a read past max bytes (0: no limit).
type limitedBody struct {
	src  io.ReadCloser
	max  int64
	n    int64
	call *remoteCall
	err  error
}

func (b *limitedBody) refuse() {
	lim := &RemoteLimitError{Limit: "MaxResponseBytes", Bytes: b.max}
	b.call.fail(lim)
	b.err = lim
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.max <= 0 {
		return b.src.Read(p)
	}
	if room := b.max - b.n + 1; int64(len(p)) > room {
		p = p[:room] // one byte more than allowed tells that there is more
	}
	n, err := b.src.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		b.refuse()
		return n - int(b.n-b.max), b.err
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.src.Close() }

// errorBody ends the body of an HTTP error at max bytes (0: no limit),
// with a note that says so when there was more.
type errorBody struct {
	src  io.ReadCloser
	max  int64
	n    int64
	tail io.Reader // the note, once the limit is reached
}

func (b *errorBody) Read(p []byte) (int, error) {
	if b.tail != nil {
		return b.tail.Read(p)
	}
	if b.max <= 0 {
		return b.src.Read(p)
	}
	if b.n >= b.max {
		var probe [1]byte
		if n, _ := io.ReadFull(b.src, probe[:]); n == 0 {
			return 0, io.EOF
		}
		b.tail = strings.NewReader(fmt.Sprintf(" [… cut by the proxy at %s (MaxErrorBytes)]", proxySize(b.max)))
		return b.tail.Read(p)
	}
	if room := b.max - b.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.src.Read(p)
	b.n += int64(n)
	if err == io.EOF && b.n >= b.max {
		err = nil // the probe above tells
	}
	return n, err
}

func (b *errorBody) Close() error { return b.src.Close() }

// sseLimiter reads an event stream as mcp-go does (lines split at "\n",
// trailing "\r" and "\n" removed, data lines joined with "\n", an event
// dispatched at an empty line when its data is not empty, a last line
// without "\n" ignored) and passes it on with each event's data on one
// "data:" line, so that mcp-go, which joins data lines by copying all the
// data so far for each line, reads it in linear time.
//
// Data of several lines is joined with "\n"; when that is valid JSON
// every "\n" in it is whitespace between tokens (JSON strings cannot hold
// one), so it is passed on with spaces instead, which JSON reads the
// same. When it is not valid JSON the event is dropped: mcp-go would fail
// to decode it and skip it. The fields mcp-go reads (event, id, retry)
// pass through as they come; comments and other fields, which it
// ignores, are dropped.
//
// An event larger than maxEvent bytes, or a stream larger than maxTotal
// bytes (0: no limit), fails the read and is recorded in call.
type sseLimiter struct {
	src      io.ReadCloser
	r        *bufio.Reader
	call     *remoteCall
	maxEvent int64
	maxTotal int64

	total int64     // bytes read from src
	event int64     // bytes read since the last event ended
	line  []byte    // the line being read
	long  lineParts // a line of many reads, being read
	turn  largeTurn // see largeLineTurn
	data  []byte    // the current event's data, joined as mcp-go joins it
	multi bool      // data holds more than one line
	pend  [][]byte  // passed on, not read yet; each event's data is not copied again
	err   error

	incoming func(id json.RawMessage, msg []byte) // see newLimitClient

	// notice is given each notification larger than maxNotice (when
	// not nil), and returns what mcp-go reads of it: a cut one, or nil.
	notice    func([]byte) []byte
	maxNotice int64
}

var (
	sseNewline    = []byte("\n")
	sseDataPrefix = []byte("data: ")
)

func newSSELimiter(src io.ReadCloser, maxEvent, maxTotal int64, call *remoteCall) *sseLimiter {
	return &sseLimiter{src: src, r: bufio.NewReaderSize(src, 32<<10), call: call, maxEvent: maxEvent, maxTotal: maxTotal}
}

func (s *sseLimiter) Read(p []byte) (int, error) {
	for len(s.pend) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.step()
	}
	n := 0
	for n < len(p) && len(s.pend) > 0 {
		c := copy(p[n:], s.pend[0])
		n += c
		if s.pend[0] = s.pend[0][c:]; len(s.pend[0]) == 0 {
			s.pend[0] = nil
			s.pend = s.pend[1:]
		}
	}
	return n, nil
}

func (s *sseLimiter) Close() error {
	s.turn.closed.Store(true)
	s.turn.release()
	return s.src.Close()
}

// step reads at most one line, or a part of a long one.
func (s *sseLimiter) step() {
	chunk, err := s.r.ReadSlice('\n')
	s.total += int64(len(chunk))
	s.event += int64(len(chunk))
	switch {
	case s.maxEvent > 0 && s.event > s.maxEvent:
		s.stop(&RemoteLimitError{Limit: "MaxEventBytes", Bytes: s.maxEvent})
		return
	case s.maxTotal > 0 && s.total > s.maxTotal:
		s.stop(&RemoteLimitError{Limit: "MaxResponseBytes", Bytes: s.maxTotal})
		return
	}
	if errors.Is(err, bufio.ErrBufferFull) || len(s.long.blocks) > 0 {
		// A line of many reads (a large event's data) is gathered in
		// blocks and copied once (see lineParts), not grown by append.
		s.long.add(chunk)
		s.turn.grow(s.long.n, len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			return
		}
		s.line = s.long.join()
		s.long = lineParts{}
	} else {
		s.line = append(s.line, chunk...)
	}
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return // the rest of the line comes next
	case errors.Is(err, io.EOF):
		s.line, s.long = s.line[:0], lineParts{} // unterminated: mcp-go ignores it
		s.flush()
		s.err = io.EOF
		return
	case err != nil:
		s.err = err
		s.turn.end()
		return
	}
	s.field(bytes.TrimRight(s.line, "\r\n"))
	s.line = s.line[:0] // nil when field took it
}

func (s *sseLimiter) stop(err *RemoteLimitError) {
	s.call.fail(err)
	s.err = err
	s.line, s.data, s.long = nil, nil, lineParts{}
	s.turn.end()
}

func (s *sseLimiter) field(line []byte) {
	switch {
	case len(line) == 0:
		s.flush()
		s.pend = append(s.pend, sseNewline)
		s.event = 0
	case bytes.HasPrefix(line, []byte("data:")):
		v := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
		if len(s.data) == 0 {
			s.data, s.line = v, nil // the line's buffer is the data's now
		} else {
			s.data = append(append(s.data, '\n'), v...)
			s.multi = true
		}
	case bytes.HasPrefix(line, []byte("event:")), bytes.HasPrefix(line, []byte("id:")), bytes.HasPrefix(line, []byte("retry:")):
		s.pend = append(s.pend, append(bytes.Clone(line), '\n'))
	}
}

// flush passes the current event's data on, in one line.
func (s *sseLimiter) flush() {
	d := s.data
	keep := len(d) > 0
	if keep && s.multi {
		if keep = json.Valid(d); keep {
			for i, c := range d {
				if c == '\n' {
					d[i] = ' '
				}
			}
		}
	}
	if keep && s.notice != nil && int64(len(d)) > s.maxNotice && isNotification(d) {
		// Cut before mcp-go decodes it: a log message of 50 MB cost the
		// proxy its decoding into maps, and the client its 50 MB.
		n := len(d)
		d = s.notice(d)
		keep = d != nil
		s.data = nil
		collectAfter(n)
	}
	if keep && s.incoming != nil && mayBeRequest(d) {
		if id, method, _, ok := peekHeader(d); ok && method != nil && len(id) > 0 && string(id) != "null" {
			s.incoming(bytes.Clone(id), bytes.Clone(d))
		}
	}
	if keep {
		if out := s.call.take(d); out != nil {
			d = out // the response to a forwarded call, taken (see proxy_raw.go)
		}
		s.pend = append(s.pend, sseDataPrefix, d, sseNewline)
	}
	s.data, s.multi = nil, false // handed on, or dropped
	s.turn.end()
}

// mayBeRequest reports whether msg, a message of the remote, may be a
// request, by its head alone: a request names its method among its first
// members, and a response (which may be large, and is not scanned) has a
// result or an error instead.
func mayBeRequest(msg []byte) bool {
	head := msg[:min(len(msg), 512)]
	return bytes.Contains(head, []byte(`"method"`)) && !bytes.Contains(head, []byte(`"result"`)) && !bytes.Contains(head, []byte(`"error"`))
}

// proxyClip returns s cut to at most n bytes (0: no limit) at a rune
// boundary, with a note saying how much was cut.
func proxyClip(s string, n int64) string {
	if n <= 0 || int64(len(s)) <= n {
		return s
	}
	cut := int(n)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" [… %d more bytes cut by the proxy at %s (MaxErrorBytes)]", len(s)-cut, proxySize(n))
}
