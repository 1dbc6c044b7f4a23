package extractworker

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/mcplro/lro/internal/jqsandbox"
	"github.com/mcplro/lro/internal/textlines"
)

// Request asks for one query over one offloaded file.
type Request struct {
	// Path is the absolute path of the file. A worker opens it itself and
	// refuses it unless it is still File. (Path and Query travel as blobs,
	// byte for byte: JSON would replace bytes that are not UTF-8.)
	Path string `json:"-"`
	// File identifies the file the caller opened and checked.
	File FileID `json:"file"`
	// Query is the jq filter.
	Query string `json:"-"`
	// Trusted marks a filter of ours (a recipe): compiled without the
	// per-builtin guards and kept compiled between calls.
	Trusted bool `json:"trusted,omitempty"`
	// Vars names the variables, without '$'; Values is the JSON array of
	// their values, in the same order.
	Vars   []string        `json:"vars,omitempty"`
	Values json.RawMessage `json:"values,omitempty"`
	// PatternCost is what the values used as regular expressions cost to
	// compile (see jqsandbox.PatternCost). A kept recipe caches every
	// expression it compiles, so it is compiled afresh once the costs of
	// its calls add up.
	PatternCost int `json:"pattern_cost,omitempty"`
	// Slurp runs the query once over the array of all records.
	Slurp bool `json:"slurp,omitempty"`
	// Limits bound the run. Limits.Timeout bounds the worker's CPU time,
	// compiling and decoding included, and WallBound of it its wall time.
	Limits jqsandbox.Limits `json:"limits"`
	// Text, when set, asks for the file's lines instead of a jq query:
	// grep, whose pattern is Query, or a range of lines. Only
	// Limits.Timeout applies then.
	Text *TextRequest `json:"text,omitempty"`
}

// TextRequest asks for lines of a file as grep -n or sed -n prints them
// (see internal/textlines), the whole file read, its lines those of
// textlines.Body (line 1 the first record, or a text's first line): the
// lines in the range Lines, or, when Lines is empty, those that
// Request.Query matches.
type TextRequest struct {
	Lines      string `json:"lines,omitempty"` // a range as textlines.ParseRange reads it
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	Context    int    `json:"context,omitempty"`  // lines before and after each match
	Budget     int    `json:"budget"`             // textlines.Limits
	MaxLine    int    `json:"max_line,omitempty"` // textlines.Limits
}

// Response is the answer to a Request: the results, or why there are none.
type Response struct {
	// Values holds the results, each encoded as jq -c prints it.
	Values []json.RawMessage `json:"-"`
	// Truncated, Omitted, Uncounted and Elements are jqsandbox.Result's.
	Truncated bool `json:"truncated,omitempty"`
	Omitted   int  `json:"omitted,omitempty"`
	Uncounted bool `json:"uncounted,omitempty"`
	Elements  int  `json:"elements,omitempty"`
	// Failure is set when the query failed or was stopped; Values then
	// holds the results produced before.
	Failure *Failure `json:"failure,omitempty"`
	// Cached reports that the file is decoded in the worker's cache now,
	// or that the worker knows the query's count (see CountCache), so
	// that the next query of it is best sent to the same worker.
	Cached bool `json:"cached,omitempty"`
	// Retire reports that the process that ran the query must go: the
	// query's evaluation could not be stopped (a builtin call keeps
	// running, and holds the process's run slot).
	Retire bool `json:"retire,omitempty"`
	// Text answers a TextRequest; its Text travels as the single value.
	Text *textlines.Output `json:"text,omitempty"`
}

// FileID identifies a file: the same device, inode, size and modification
// time. Published offload files never change, so a file with the same
// FileID has the same records.
type FileID struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	ModNs int64  `json:"mod_ns"`
}

// Key returns id as a cache key.
func (id FileID) Key() string {
	return strconv.FormatUint(id.Dev, 16) + ":" + strconv.FormatUint(id.Ino, 16) + ":" +
		strconv.FormatInt(id.Size, 16) + ":" + strconv.FormatInt(id.ModNs, 16)
}

// blobs returns what travels besides the header of a request.
func (r *Request) blobs() []json.RawMessage {
	return []json.RawMessage{json.RawMessage(r.Path), json.RawMessage(r.Query)}
}

// readRequest reads a request frame.
func readRequest(r *bufio.Reader) (*Request, error) {
	var req Request
	blobs, err := readFrame(r, maxRequestFrame, &req)
	if err != nil {
		return nil, err
	}
	if len(blobs) != 2 {
		return nil, errors.New("extractworker: malformed request")
	}
	req.Path, req.Query = string(blobs[0]), string(blobs[1])
	return &req, nil
}

// Frames. Each message is a frame: a 4-byte big-endian length of the rest,
// then a 4-byte length and the JSON header, then any number of blobs, each
// a 4-byte length and its bytes (typed json.RawMessage, but any bytes).
// Results travel as blobs, so they are not escaped into JSON strings nor
// validated again on the way.
const (
	// maxRequestFrame bounds a request: the query (4 KiB by default), the
	// parameters (capped by the caller) and the limits.
	maxRequestFrame = 4 << 20
	// frameSlack is what a response may hold beyond its results' bytes:
	// the header, a failure message, the blob lengths.
	frameSlack = 1 << 20
)

var errFrameTooLarge = errors.New("extractworker: frame too large")

// writeFrame writes header and blobs as one frame, with a single write
// so that a reader never sees half of one while the writer lives.
func writeFrame(w io.Writer, header any, blobs []json.RawMessage) error {
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	n := 4 + len(h)
	for _, b := range blobs {
		n += 4 + len(b)
	}
	buf := make([]byte, 0, 4+n)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(h)))
	buf = append(buf, h...)
	for _, b := range blobs {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(b)))
		buf = append(buf, b...)
	}
	_, err = w.Write(buf)
	return err
}

// readFrame reads one frame of at most max bytes and decodes its header
// into header.
func readFrame(r *bufio.Reader, max int, header any) ([]json.RawMessage, error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(lenBuf[:]))
	if n > max || n < 4 {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", errFrameTooLarge, n, max)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, unexpected(err)
	}
	hl := int(binary.BigEndian.Uint32(buf))
	if hl > n-4 {
		return nil, errors.New("extractworker: malformed frame")
	}
	if err := json.Unmarshal(buf[4:4+hl], header); err != nil {
		return nil, fmt.Errorf("extractworker: malformed frame header: %w", err)
	}
	var blobs []json.RawMessage
	for rest := buf[4+hl:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, errors.New("extractworker: malformed frame")
		}
		bl := int(binary.BigEndian.Uint32(rest))
		if bl > len(rest)-4 {
			return nil, errors.New("extractworker: malformed frame")
		}
		blobs = append(blobs, json.RawMessage(rest[4:4+bl:4+bl]))
		rest = rest[4+bl:]
	}
	return blobs, nil
}

// unexpected turns the io.EOF of a frame cut short into
// io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// hello is the first frame a worker writes: the parent waits for it
// before sending anything, so that a binary which is not a worker (or a
// different version of this one) is told apart at once.
type hello struct {
	Protocol int `json:"protocol"`
	PID      int `json:"pid"`
}

// protocolVersion changes whenever Request, Response or the framing do.
// 3: Request.Text, Response.Text. 4: Response.Uncounted (Omitted exact).
// 5: Limits.Timeout bounds the worker's CPU time, WallBound its wall time.
const protocolVersion = 5
