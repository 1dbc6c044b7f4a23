package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sseEvent is an event as mcp-go v1.2.1 dispatches it, with the last
// event ID it has recorded by then.
type sseEvent struct{ event, data, lastID string }

// mcpgoSSE reads a stream as mcp-go v1.2.1's readSSEWithCursor does (a
// copy of its logic, the reference the limiter must agree with): the
// events it dispatches and the retry it records.
func mcpgoSSE(r io.Reader) (events []sseEvent, retry string, err error) {
	br := bufio.NewReader(r)
	var event, data, id, lastID string
	var hasID bool
	for {
		line, rerr := br.ReadString('\n')
		if rerr != nil {
			if rerr == io.EOF {
				if data != "" {
					if event == "" {
						event = "message"
					}
					events = append(events, sseEvent{event, data, lastID})
				}
				return events, retry, nil
			}
			return events, retry, rerr
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if hasID {
				lastID = id
			}
			hasID = false
			if data != "" {
				if event == "" {
					event = "message"
				}
				events = append(events, sseEvent{event, data, lastID})
				event, data = "", ""
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "event:"); ok {
			event = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "data:"); ok {
			v = strings.TrimPrefix(v, " ")
			if data == "" {
				data = v
			} else {
				data = data + "\n" + v
			}
		} else if v, ok := strings.CutPrefix(line, "id:"); ok {
			if v := strings.TrimPrefix(v, " "); !strings.ContainsRune(v, 0) {
				id, hasID = v, true
			}
		} else if v, ok := strings.CutPrefix(line, "retry:"); ok {
			v = strings.TrimPrefix(v, " ")
			if _, err := strconv.ParseUint(v, 10, 31); err == nil && v != "" && strings.Trim(v, "0123456789") == "" {
				retry = v
			}
		}
	}
}

// expected is what mcp-go should see of events through the limiter: the
// same events, those whose data spans lines and is not JSON dropped (mcp-go
// cannot decode them either), the rest with spaces for the line breaks.
func expected(events []sseEvent) []sseEvent {
	var out []sseEvent
	for _, e := range events {
		if strings.Contains(e.data, "\n") {
			if !json.Valid([]byte(e.data)) {
				continue
			}
			e.data = strings.ReplaceAll(e.data, "\n", " ")
		}
		out = append(out, e)
	}
	return out
}

// smallReads returns at most n bytes a Read, to cut lines across reads.
type smallReads struct {
	r io.Reader
	n int
}

func (s smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

func checkSSELimiter(t *testing.T, stream []byte, chunk int) {
	t.Helper()
	want, wantRetry, _ := mcpgoSSE(bytes.NewReader(stream))
	lim := newSSELimiter(io.NopCloser(smallReads{bytes.NewReader(stream), max(chunk, 1)}), 0, 0, nil)
	got, gotRetry, err := mcpgoSSE(lim)
	if err != nil {
		t.Fatalf("reading through the limiter: %v", err)
	}
	if w := expected(want); !equalEvents(got, w) || gotRetry != wantRetry {
		t.Fatalf("stream %q:\nmcp-go alone: %q retry %q\nthrough the limiter: %q retry %q", stream, w, wantRetry, got, gotRetry)
	}
}

func equalEvents(a, b []sseEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var sseSeeds = []string{
	"data: {\"a\":1}\n\n",
	"data: {\"a\":\ndata: 1}\n\n",
	"data: {\"a\":\r\ndata:  1}\r\n\r\n",
	"data: not\ndata: json\n\ndata: \"fine\"\n\n",
	"id: 1\nevent: x\ndata: 1\n\nid: 2\n\ndata: 2",
	"data: 1\ndata: 2\n\n",
	"data:\ndata: {}\n\n",
	"data: {}\ndata:\n\n",
	": comment\nretry: 10\nretry: x\ndata: [1,\n: mid\ndata: 2]\n\n",
	"id: a\x00b\ndata: 1\n\n",
	"data: \"a\rb\"\n\n",
	"data: 1\r\r\n\n",
	"event:  spaced  \ndata:   3\n\n",
	"data: 1\n\ndata: 2\ndata: partial",
	"\n\n\n",
	"data: [\"x\",\ndata: \"y\"]",
}

func TestSSELimiterAgreesWithMCPGo(t *testing.T) {
	for _, s := range sseSeeds {
		for _, chunk := range []int{1, 3, 1 << 20} {
			checkSSELimiter(t, []byte(s), chunk)
		}
	}
}

// FuzzSSELimiter: for any stream, mcp-go reads through the limiter the
// events it would read without it (see expected).
//
//	go test -run '^$' -fuzz FuzzSSELimiter -fuzztime 2m
func FuzzSSELimiter(f *testing.F) {
	for _, s := range sseSeeds {
		f.Add([]byte(s), uint8(7))
	}
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		checkSSELimiter(t, stream, int(chunk))
	})
}

// TestSSELimiterLimits: an event or a stream past its limit fails the
// read with the limit, recorded for the request.
func TestSSELimiterLimits(t *testing.T) {
	for _, tc := range []struct {
		stream      string
		event, all  int64
		want        string
		wantAllRead bool
	}{
		{"data: 12345678901234567890\n\n", 16, 0, "MaxEventBytes", false},
		{strings.Repeat("data: 1\n\n", 100), 16, 0, "", true}, // each event is small
		{strings.Repeat("data: 1\n\n", 100), 16, 500, "MaxResponseBytes", false},
		{strings.Repeat(": keepalive without end\n", 100), 64, 0, "MaxEventBytes", false},
		{"data: " + strings.Repeat("x", 100000), 1000, 0, "MaxEventBytes", false}, // one line with no end
	} {
		call := &remoteCall{}
		lim := newSSELimiter(io.NopCloser(strings.NewReader(tc.stream)), tc.event, tc.all, call)
		_, err := io.ReadAll(lim)
		var le *RemoteLimitError
		if tc.wantAllRead {
			if err != nil {
				t.Errorf("%.40q: %v", tc.stream, err)
			}
			continue
		}
		if !errors.As(err, &le) || le.Limit != tc.want || call.limit != le {
			t.Errorf("%.40q: got %v, want %s recorded", tc.stream, err, tc.want)
		}
	}
}

// TestSSELimiterLinear: data lines cost linear time however many there
// are; mcp-go alone took over 2 min for this. 5 MB in 50,000 lines is
// timed against its floor, the same bytes in 500 lines, in the same run
// (the fastest of three each): a cost quadratic in lines is 10,000 times
// the floor, a linear one about the floor.
func TestSSELimiterLinear(t *testing.T) {
	parse := func(lines int) time.Duration {
		var b strings.Builder
		b.WriteString("data: [\n")
		for range lines {
			b.WriteString("data: \"" + strings.Repeat("x", 5_000_000/lines) + "\",\n")
		}
		b.WriteString("data: 0]\n\n")
		fastest := time.Duration(math.MaxInt64)
		for range 3 {
			start := time.Now()
			events, _, err := mcpgoSSE(newSSELimiter(io.NopCloser(strings.NewReader(b.String())), 0, 0, nil))
			fastest = min(fastest, time.Since(start))
			if err != nil || len(events) != 1 || len(events[0].data) < 5_000_000 {
				t.Fatalf("%d lines: got %d events, %v", lines, len(events), err)
			}
		}
		return fastest
	}
	floor, took := parse(500), parse(50_000)
	t.Logf("5 MB in 50,000 lines %v, in 500 lines %v", took, floor)
	if took > 20*floor {
		t.Errorf("5 MB in 50,000 lines took %v, over 20 times the same bytes in 500 lines (%v)", took, floor)
	}
}

func TestLimitedBodies(t *testing.T) {
	call := &remoteCall{}
	b := &limitedBody{src: io.NopCloser(strings.NewReader(strings.Repeat("x", 100))), max: 10, call: call}
	got, err := io.ReadAll(b)
	if len(got) != 10 || call.limit == nil || !errors.As(err, new(*RemoteLimitError)) {
		t.Errorf("limitedBody: read %d, %v", len(got), err)
	}
	b = &limitedBody{src: io.NopCloser(strings.NewReader(strings.Repeat("x", 10))), max: 10, call: &remoteCall{}}
	if got, err := io.ReadAll(b); len(got) != 10 || err != nil {
		t.Errorf("limitedBody at the limit: read %d, %v", len(got), err)
	}

	e := &errorBody{src: io.NopCloser(strings.NewReader(strings.Repeat("e", 100))), max: 10}
	got, err = io.ReadAll(e)
	if err != nil || !strings.HasPrefix(string(got), strings.Repeat("e", 10)+" [… cut by the proxy at 10 bytes (MaxErrorBytes)]") {
		t.Errorf("errorBody: %q, %v", got, err)
	}
	e = &errorBody{src: io.NopCloser(strings.NewReader(strings.Repeat("e", 10))), max: 10}
	if got, err := io.ReadAll(e); string(got) != strings.Repeat("e", 10) || err != nil {
		t.Errorf("errorBody at the limit: %q, %v", got, err)
	}

	if got := proxyClip("héllo wörld", 2); got != "h [… 12 more bytes cut by the proxy at 2 bytes (MaxErrorBytes)]" {
		t.Errorf("proxyClip cuts at a rune boundary: %q", got)
	}
}

// BenchmarkSSELimiter measures what the limiter costs a response of 5 MB,
// in one data line and in 50,000.
//
//	go test -run '^$' -bench SSELimiter -benchmem
func BenchmarkSSELimiter(b *testing.B) {
	item := `"` + strings.Repeat("x", 100) + `",`
	for _, tc := range []struct {
		name string
		sep  string
	}{{"one_line", ""}, {"50k_lines", "\ndata: "}} {
		stream := []byte("data: [" + strings.Repeat(item+tc.sep, 50_000) + "0]\n\n")
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				lim := newSSELimiter(io.NopCloser(bytes.NewReader(stream)), 64<<20, 64<<20, nil)
				if _, err := io.Copy(io.Discard, lim); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
