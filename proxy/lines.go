package proxy

import (
	"bufio"
	"bytes"
	"io"
	"regexp"
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
	var buf []byte
	var long *longLine
	for {
		chunk, err := l.r.ReadSlice('\n')
		switch {
		case long != nil:
			long.size += int64(len(chunk))
			long.tail = keepTail(long.tail, chunk)
		case l.max > 0 && int64(len(buf)+len(bytes.TrimRight(chunk, "\r\n"))) > l.max:
			long = &longLine{size: int64(len(buf) + len(chunk))}
			whole := append(buf, chunk...)
			long.head = append([]byte(nil), whole[:min(len(whole), longHead)]...)
			long.tail = keepTail(nil, whole)
			buf = nil
		default:
			buf = append(buf, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (len(buf) == 0 && long == nil || err != io.EOF) {
			return nil, nil, err
		}
		if long != nil {
			return nil, long, nil
		}
		buf = bytes.TrimRight(buf, "\r\n")
		if len(bytes.TrimSpace(buf)) == 0 {
			if err != nil {
				return nil, nil, err
			}
			buf = buf[:0]
			continue
		}
		return buf, nil, nil
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
