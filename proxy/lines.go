package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// lineReader reads the newline-delimited JSON-RPC messages of an MCP stdio
// stream with a bound on each. mcp-go's stdio transport reads a line with
// bufio.Reader.ReadString, however long: a server that writes one endless
// line grows the reader's memory without bound. lineReader holds at most
// max bytes of a line (and twice that while the slice grows); a longer
// line is skipped as it streams by, keeping only its head and tail, which
// usually name the request it answers.
type lineReader struct {
	r   *bufio.Reader
	max int64 // 0: no limit
}

// longHead is how much of each end of a skipped line is kept.
const longHead = 256

// longLine is what is kept of a line longer than the limit.
type longLine struct {
	size       int64
	head, tail []byte
}

func newLineReader(r io.Reader, max int64) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next non-empty line, without its line ending, in a
// slice of its own; or, for a line longer than the limit, what is kept of
// it. At the end of the stream it returns a last line without a newline,
// then io.EOF.
func (l *lineReader) next() ([]byte, *longLine, error) {
	var parts lineParts
	var long *longLine
	for {
		chunk, err := l.r.ReadSlice('\n')
		switch {
		case long != nil:
			long.size += int64(len(chunk))
			long.tail = keepTail(long.tail, chunk)
		case l.max > 0 && int64(parts.n+len(bytes.TrimRight(chunk, "\r\n"))) > l.max:
			long = &longLine{size: int64(parts.n + len(chunk))}
			var tail []byte
			for _, b := range append(parts.blocks, chunk) {
				if len(long.head) < longHead {
					long.head = append(long.head, b[:min(len(b), longHead-len(long.head))]...)
				}
				tail = keepTail(tail, b)
			}
			long.tail = tail
			parts = lineParts{}
		default:
			parts.add(chunk)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (parts.n == 0 && long == nil || err != io.EOF) {
			return nil, nil, err
		}
		if long != nil {
			return nil, long, nil
		}
		buf := bytes.TrimRight(parts.join(), "\r\n")
		if len(bytes.TrimSpace(buf)) == 0 {
			if err != nil {
				return nil, nil, err
			}
			parts = lineParts{}
			continue
		}
		return buf, nil, nil
	}
}

// lineParts gathers a line as it is read, in blocks that grow with it,
// each byte copied into one block and then once into the line (join).
// Appending to one slice instead copied a 50 MB line again at each of
// some 40 growths, and its garbage took the proxy's peak RSS to three
// times the line.
type lineParts struct {
	blocks [][]byte
	n      int
}

// maxLineBlock bounds a block of lineParts: what a line wastes at most.
const maxLineBlock = 4 << 20

func (p *lineParts) add(chunk []byte) {
	p.n += len(chunk)
	if k := len(p.blocks); k > 0 {
		last := p.blocks[k-1]
		fit := min(len(chunk), cap(last)-len(last))
		p.blocks[k-1] = append(last, chunk[:fit]...)
		chunk = chunk[fit:]
	}
	if len(chunk) > 0 {
		size := max(len(chunk), min(p.n, maxLineBlock))
		p.blocks = append(p.blocks, append(make([]byte, 0, size), chunk...))
	}
}

// join returns the line in one slice of its size: the one block, or the
// blocks copied.
func (p *lineParts) join() []byte {
	if len(p.blocks) == 1 {
		return p.blocks[0]
	}
	line := make([]byte, 0, p.n)
	for _, b := range p.blocks {
		line = append(line, b...)
	}
	p.blocks = nil
	collectAfter(len(line))
	return line
}

// largeGarbage is the size of a message past which the proxy collects the
// garbage its reading or decoding left before it goes on (collectAfter).
const largeGarbage = 16 << 20

// collectAfter gives the memory of n bytes of garbage back to the system
// when a step has just let go of that much, n being largeGarbage or more:
// the blocks of a line read, a message once decoded. The collector would
// run only once the heap had grown to twice what is live (GOGC), and keep
// the pages after; the next step of a large message (the decoded text,
// the offload) allocates as much again, in pages of its own: a 50 MB
// answer took the proxy to 155 MiB of peak RSS, 112 MiB now. The
// collection costs little, the heap holding few pointers beside the
// message's bytes (it is what lro does after a large offload, see its
// release.go).
func collectAfter(n int) {
	if n >= largeGarbage {
		debug.FreeOSMemory()
	}
}

// largeLineTurn lets one event stream at a time gather a line of
// largeGarbage bytes or more: a remote that sent two 50 MB notifications
// at once, one on the call's stream and one on its GET stream (mcp-go's
// server does, as it pleases), had them gathered side by side, and the
// proxy's peak RSS went to 4.6 times the message instead of 2.4
// (TestProxyLargeMessagesPeakRSS). The second waits until the first has
// been read and handed on (cut, or taken to be offloaded). It waits no
// longer than the holder reads: a remote may write its streams in turn,
// the rest of the holder's line coming only once the waiter's is read;
// when the holder has read nothing for largeLineStall the waiter goes on
// without the turn, memory being better spent than the streams stalled.
var (
	largeLineTurn = make(chan struct{}, 1)
	largeLineRead atomic.Int64 // bytes read by the holder: its progress
)

// largeLineStall is a var for the tests.
var largeLineStall = time.Second

// largeTurn is a stream's hold of largeLineTurn.
type largeTurn struct {
	asked  bool        // the line being read has asked for the turn
	held   atomic.Bool // the turn is this stream's
	closed atomic.Bool // the stream is closed: a turn taken now is given back
}

// grow notes that the line being read is n bytes, chunk of them just
// read, and waits for the turn once the line is large.
func (t *largeTurn) grow(n, chunk int) {
	if !t.asked && n >= largeGarbage {
		t.asked = true
		if waitLargeLineTurn() {
			t.held.Store(true)
			if t.closed.Load() {
				t.release()
			}
		}
	}
	if t.held.Load() {
		largeLineRead.Add(int64(chunk))
	}
}

// end gives the turn back, if held, once the line has been handed on.
func (t *largeTurn) end() {
	t.asked = false
	t.release()
}

// release gives the turn back, if held; the stream's Close may call it
// while its reader runs.
func (t *largeTurn) release() {
	if t.held.CompareAndSwap(true, false) {
		<-largeLineTurn
	}
}

// waitLargeLineTurn takes the turn, or reports false when its holder has
// read nothing for largeLineStall.
func waitLargeLineTurn() bool {
	select {
	case largeLineTurn <- struct{}{}:
		return true
	default:
	}
	const polls = 10
	tick := time.NewTicker(largeLineStall / polls)
	defer tick.Stop()
	last, still := largeLineRead.Load(), 0
	for {
		select {
		case largeLineTurn <- struct{}{}:
			return true
		case <-tick.C:
			if read := largeLineRead.Load(); read != last {
				last, still = read, 0
			} else if still++; still >= polls {
				return false
			}
		}
	}
}

// keepTail returns the last longHead bytes of tail followed by chunk.
func keepTail(tail, chunk []byte) []byte {
	if len(chunk) >= longHead {
		return append(tail[:0], chunk[len(chunk)-longHead:]...)
	}
	tail = append(tail, chunk...)
	if len(tail) > longHead {
		tail = append(tail[:0], tail[len(tail)-longHead:]...)
	}
	return tail
}

// The id of a JSON-RPC response is at its start ({"jsonrpc":"2.0","id":1,
// ...}, as Go and Python SDKs write it) or at its end (...,"jsonrpc":
// "2.0","id":1}, as the TypeScript SDK writes it).
var (
	headID = regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?[0-9]{1,30})\s*,`)
	tailID = regexp.MustCompile(`[,{]\s*"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?[0-9]{1,30})\s*}\s*$`)
)

// id returns the JSON-RPC id that the kept ends of l show, or nil.
func (l *longLine) id() []byte {
	if m := headID.FindSubmatch(l.head); m != nil {
		return m[1]
	}
	if m := tailID.FindSubmatch(bytes.TrimRight(l.tail, "\r\n")); m != nil {
		return m[1]
	}
	return nil
}

// peekHeader returns the raw id, method and params of the JSON-RPC message
// b, each nil when absent, without decoding or validating the rest: the
// relay reads these of every message, and a tools/call result of many
// megabytes is then decoded once, by the tools/call path, instead of twice.
// It reads only the top-level members, skipping strings with
// bytes.IndexByte. ok is false when b is not a JSON object as far as it
// reads it; a message it takes is still checked where it is decoded (the
// client, or the tools/call path).
func peekHeader(b []byte) (id, method, params []byte, ok bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, nil, nil, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil, nil, nil, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, nil, nil, false
		}
		ks := i
		if i = endString(b, i); i < 0 {
			return nil, nil, nil, false
		}
		key := b[ks+1 : i-1]
		if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
			return nil, nil, nil, false
		}
		vs := skipWS(b, i+1)
		if i = endValue(b, vs); i < 0 {
			return nil, nil, nil, false
		}
		switch string(key) {
		case "id":
			id = b[vs:i]
		case "method":
			method = b[vs:i]
		case "params":
			params = b[vs:i]
		}
		switch i = skipWS(b, i); {
		case i < len(b) && b[i] == ',':
			i = skipWS(b, i+1)
		case i < len(b) && b[i] == '}':
			return id, method, params, true
		default:
			return nil, nil, nil, false
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// endString returns the index after the string that starts at b[i] (a
// quote), or -1.
func endString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		k += j
		n := 0
		for p := k - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return k + 1
		}
		j = k + 1
	}
}

// endValue returns the index after the value that starts at b[i], or -1.
func endValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return endString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = endString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[j]) < 0 {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// methodName returns the method of a peeked message: its JSON string
// decoded, or "" (none, or not a string).
func methodName(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
