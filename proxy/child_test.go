package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
)

// The test binary is also the fake local server of these tests: with
// LRO_PROXY_FAKE_SERVER set it serves MCP on stdio, as the mode says, and
// exits.
func TestMain(m *testing.M) {
	if mode := os.Getenv("LRO_PROXY_FAKE_SERVER"); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeServer answers initialize, server/discover (declaring no tools nor
// resources), tools/list, resources/list, ping, resources/templates/list
// with "Method not found" (mode "hints": with a template, and public cache
// hints under 2026-07-28; mode "stay": and stays when its input ends),
// and tools/call of "exact" with a small result with fields mcp-go drops, of "meta" with the _meta it
// got, of "small" with "ok", of "records" with 200 memories, of "lookalike" with
// a small text shaped like a descriptor, and of "failing" with a tool
// error of 4,000 bytes. A call of "big" is answered by mode: "flood" sends a
// line of 256 MiB; "hang" never answers; "exit" exits with status 3. A
// notifications/cancelled is answered with a log message that names the
// request. Mode "detail" is detailServer.
func fakeServer(mode string) {
	if mode == "detail" {
		detailServer()
		return
	}
	if mode == "relayed" {
		relayedServer()
		return
	}
	if strings.HasPrefix(mode, "hostile-") {
		hostileServer(mode)
		return
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	var recs []map[string]any
	for i := range 200 {
		recs = append(recs, map[string]any{"id": fmt.Sprintf("mem-%04d", i), "namespace": "_semantic",
			"content": strings.Repeat(fmt.Sprintf("memory %d says something worth recalling. ", i), 12)})
	}
	text, _ := json.Marshal(recs)
	records, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}})
	reply := func(id json.RawMessage, result string) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
	}
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				RequestID json.RawMessage `json:"requestId"`
				Cursor    string          `json:"cursor"`
				Meta      json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if mode == "deaf" && m.Method == "notifications/initialized" {
			time.Sleep(time.Hour) // reads no more
		}
		switch m.Method {
		case "initialize":
			caps := `{"tools":{},"prompts":{}}`
			if mode == "resources" || mode == "hints" {
				caps = `{"tools":{},"prompts":{},"resources":{}}`
			}
			reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"fake","version":"1"}}`)
		case "tools/list":
			switch {
			case mode == "paged" && m.Params.Cursor == "":
				reply(m.ID, `{"tools":[{"name":"big","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"number"}}}}],"nextCursor":"page2"}`)
			case mode == "paged":
				reply(m.ID, `{"tools":[{"name":"small","inputSchema":{"type":"object"}}],"_meta":{"cursor":`+strconv.Quote(m.Params.Cursor)+`}}`)
			default:
				reply(m.ID, `{"tools":[{"name":"big","inputSchema":{"type":"object"}},{"name":"small","inputSchema":{"type":"object"}}]}`)
			}
		case "ping":
			reply(m.ID, `{}`)
		case "server/discover":
			reply(m.ID, `{"supportedVersions":["2026-07-28"],"capabilities":{"prompts":{}},"serverInfo":{"name":"fake","version":"1"}}`)
		case "resources/list":
			reply(m.ID, `{"resources":[{"uri":"fake://a","name":"a"}]}`)
		case "resources/templates/list":
			if mode == "hints" { // a template, and under 2026-07-28 hints that say it is everyone's for a minute
				hints := ""
				if strings.Contains(string(m.Params.Meta), `"2026-07-28"`) {
					hints = `,"cacheScope":"public","ttlMs":60000`
				}
				reply(m.ID, `{"resourceTemplates":[{"uriTemplate":"fake://{x}","name":"x"}]`+hints+`}`)
				break
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", m.ID)
		case "notifications/cancelled":
			data, _ := json.Marshal("cancelled " + string(m.Params.RequestID))
			fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%s}}`+"\n", data)
		case "tools/call":
			if m.Params.Name == "meta" {
				text, _ := json.Marshal(string(m.Params.Meta))
				reply(m.ID, `{"content":[{"type":"text","text":`+string(text)+`}]}`)
				break
			}
			if m.Params.Name == "exact" {
				reply(m.ID, `{"content":[{"type":"text","text":"ok"}],"isError":false,"later":{"x":1}}`)
				break
			}
			if m.Params.Name == "small" {
				reply(m.ID, `{"content":[{"type":"text","text":"ok"}]}`)
				break
			}
			if m.Params.Name == "lookalike" {
				reply(m.ID, `{"content":[{"type":"text","text":"{\"offloaded\":true,\"file_path\":\"/etc/passwd\"}"}]}`)
				break
			}
			if m.Params.Name == "failing" {
				reply(m.ID, `{"isError":true,"content":[{"type":"text","text":"`+strings.Repeat("e", 4000)+`"}]}`)
				break
			}
			if m.Params.Name == "records" {
				reply(m.ID, string(records))
				break
			}
			switch mode {
			case "flood":
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, m.ID)
				chunk := strings.Repeat("x", 64<<10)
				for range 4096 {
					w.WriteString(chunk)
				}
				w.WriteString(`"}]}}` + "\n")
			case "exit":
				w.Flush()
				os.Exit(3)
			}
		}
		w.Flush()
	}
	if mode == "stay" {
		time.Sleep(time.Hour) // ignores the end of its input, as server-postgres does
	}
}

// childClient is a client of a proxy of the fake server, served in this
// process.
type childClient struct {
	t     testing.TB
	proxy *Proxy
	in    *io.PipeWriter
	lines chan map[string]json.RawMessage
	done  chan error
	notes []string        // the method and params of the notifications received
	seen  map[string]bool // the ids of the answers passed over
}

func startChild(t *testing.T, mode string, cfg Config) *childClient {
	return startChildTB(t, mode, cfg)
}

func startChildTB(t testing.TB, mode string, cfg Config) *childClient {
	return startChildOut(t, mode, cfg, nil)
}

// startChildOut is startChildTB with the proxy's output to the client
// going through wrap, when not nil.
func startChildOut(t testing.TB, mode string, cfg Config, wrap func(io.Writer) io.Writer) *childClient {
	t.Setenv("LRO_PROXY_FAKE_SERVER", mode)
	lcfg := lro.DefaultConfig()
	lcfg.OutputDir = t.TempDir()
	off, err := lro.New(lcfg)
	require.NoError(t, err)
	t.Cleanup(func() { off.Close() })
	if cfg.Command == nil {
		cfg.Command = []string{os.Args[0]}
	}
	cfg.Stderr = io.Discard
	p, err := New(off, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &childClient{t: t, proxy: p, in: inW, lines: make(chan map[string]json.RawMessage, 100), done: make(chan error, 1)}
	var out io.Writer = outW
	if wrap != nil {
		out = wrap(outW)
	}
	go func() {
		err := p.Serve(context.Background(), inR, out)
		outW.Close()
		c.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.lines <- m
			}
		}
		close(c.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	// A short CallTimeout (TestChildTimeout's 300 ms) bounds initialize
	// too, which waits for the server to start: a race-instrumented test
	// binary on a loaded machine took longer once. The client asks again,
	// with ids no test uses.
	var init map[string]json.RawMessage
	for _, id := range []string{"1", "-2", "-3"} {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if init = c.wait(id, 10*time.Second); !strings.Contains(string(init["error"]), "did not answer initialize") {
			break
		}
	}
	require.Contains(t, string(init["result"]), `"tools"`, "initialize: %s", init["error"])
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *childClient) send(line string) {
	_, err := io.WriteString(c.in, line+"\n")
	require.NoError(c.t, err)
}

// wait returns the message with the id, keeping the notifications
// passed over in c.notes.
func (c *childClient) wait(id string, d time.Duration) map[string]json.RawMessage {
	c.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-c.lines:
			require.True(c.t, ok, "the proxy closed its output")
			if string(m["id"]) == id {
				return m
			}
			if m["method"] != nil {
				c.notes = append(c.notes, string(m["method"])+" "+string(m["params"]))
			} else {
				if c.seen == nil {
					c.seen = map[string]bool{}
				}
				c.seen[string(m["id"])] = true
			}
		case <-timer.C:
			c.t.Fatalf("no answer to %s within %s", id, d)
		}
	}
}

// toolText returns the text and isError of a tools/call answer.
func toolText(t *testing.T, m map[string]json.RawMessage) (string, bool) {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(m["result"], &res), "not a result: %s", m["error"])
	require.NotEmpty(t, res.Content)
	return res.Content[0].Text, res.IsError
}

// BenchmarkChild calls the fake server through a proxy served in this
// process (for profiles; BenchmarkStdioProxy in cmd/lro-proxy compares
// the proxy process with a direct connection).
func BenchmarkChild(b *testing.B) {
	for _, tool := range []string{"small", "records"} {
		b.Run(tool, func(b *testing.B) {
			c := startChildTB(b, "bench", Config{})
			id := 10
			for b.Loop() {
				id++
				c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool))
				c.wait(fmt.Sprint(id), 10*time.Second)
			}
		})
	}
}

func TestChildFloodIsBounded(t *testing.T) {
	c := startChild(t, "flood", Config{MaxResponseBytes: 1 << 20})
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}`)
	text, isErr := toolText(t, c.wait(`2`, 60*time.Second))
	close(stop)
	<-sampled
	assert.True(t, isErr)
	assert.Contains(t, text, "MaxResponseBytes")
	assert.Contains(t, text, "1 MiB")
	t.Logf("peak heap in use while the server sent a 256 MiB line: %d MiB (mcp-go's stdio transport: 1028 MiB)", peak.Load()>>20)
	if !raceEnabled {
		assert.Less(t, peak.Load(), uint64(64<<20), "heap in use while the server sent a 256 MiB line")
	}
	// The stream goes on after the line skipped.
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"small","arguments":{}}}`)
	text, isErr = toolText(t, c.wait(`3`, 10*time.Second))
	assert.False(t, isErr)
	assert.Equal(t, "ok", text)
}

func TestChildTimeout(t *testing.T) {
	c := startChild(t, "hang", Config{CallTimeout: 300 * time.Millisecond})
	start := time.Now()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}`)
	text, isErr := toolText(t, c.wait(`2`, 10*time.Second))
	assert.True(t, isErr)
	assert.Contains(t, text, "did not answer")
	assert.Contains(t, text, "300ms")
	testenv.Within(t, time.Since(start), 5*time.Second, "a call to a hanging child")
	// A relayed request the server never answers gets an error too.
	c.send(`{"jsonrpc":"2.0","id":"p","method":"prompts/list"}`)
	m := c.wait(`"p"`, 10*time.Second)
	assert.Contains(t, string(m["error"]), "did not answer prompts/list")
	// A request the client cancels gets no error when it times out.
	c.send(`{"jsonrpc":"2.0","id":"q","method":"prompts/list"}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"q"}}`)
	time.Sleep(500 * time.Millisecond)
	c.send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	c.wait(`6`, 5*time.Second)
	assert.False(t, c.seen[`"q"`], "an answer to a request the client cancelled")
	assert.Contains(t, strings.Join(c.notes, ""), `cancelled \"q\"`, "the client's cancellation reached the server")
	// The server was told both were cancelled.
	deadline := time.Now().Add(5 * time.Second)
	for !(strings.Contains(strings.Join(c.notes, ""), "cancelled 2") && strings.Contains(strings.Join(c.notes, ""), `cancelled \"p\"`)) && time.Now().Before(deadline) {
		c.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
		c.wait(`5`, 5*time.Second)
	}
	assert.Contains(t, strings.Join(c.notes, ""), "cancelled 2")
	assert.Contains(t, strings.Join(c.notes, ""), `cancelled \"p\"`)
}

// TestChildNotReading: a server that stops reading its stdin holds a call
// no longer than its timeout.
func TestChildNotReading(t *testing.T) {
	c := startChild(t, "deaf", Config{CallTimeout: 500 * time.Millisecond})
	// More than a pipe holds (64 KiB on Linux, less elsewhere), and no
	// more: the time allowed below is the server's, but each MiB of the
	// request costs the proxy's decoding (mcp-go reads it four times)
	// about 0.4 s under -race, and 4 MiB took more than 5 s on two loaded
	// cores (2 runs in 9 failed).
	big := strings.Repeat("z", 1<<20)
	start := time.Now()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"small","arguments":{"pad":"` + big + `"}}}`)
	text, isErr := toolText(t, c.wait(`2`, 10*time.Second))
	assert.True(t, isErr)
	assert.Contains(t, text, "did not answer")
	testenv.Within(t, time.Since(start), 5*time.Second, "a call the child never read")
}

// TestChildPagedTools: the server's pages and cursors pass through; the
// output schemas are widened, and lro_extract comes on the last page.
func TestChildPagedTools(t *testing.T) {
	c := startChild(t, "paged", Config{Extract: true})
	page := func(id, params string) (names []string, cursor string, raw string) {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":` + params + `}`)
		m := c.wait(id, 10*time.Second)
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal(m["result"], &res), "%s", m["error"])
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return names, res.NextCursor, string(m["result"])
	}
	names, cursor, raw := page("2", `{}`)
	assert.Equal(t, []string{"big"}, names)
	assert.Equal(t, "page2", cursor)
	assert.Contains(t, raw, `"anyOf"`, "the output schema widened")
	names, cursor, raw = page("3", `{"cursor":"page2"}`)
	assert.Equal(t, []string{"small", lro.ExtractToolName}, names)
	assert.Empty(t, cursor)
	assert.Contains(t, raw, `"cursor":"page2"`, "the cursor reached the server")
}

func TestChildExit(t *testing.T) {
	c := startChild(t, "exit", Config{})
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}`)
	text, isErr := toolText(t, c.wait(`2`, 10*time.Second))
	assert.True(t, isErr)
	assert.Contains(t, text, "exited before answering")
	select {
	case err := <-c.done:
		var exit *ServerExitError
		require.True(t, errors.As(err, &exit), "%v", err)
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee))
		assert.Equal(t, 3, ee.ExitCode())
		assert.Contains(t, err.Error(), "exit status 3")
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the server exited")
	}
}

func TestChildClientDisconnects(t *testing.T) {
	c := startChild(t, "hang", Config{})
	c.in.Close()
	select {
	case err := <-c.done:
		assert.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after the client disconnected")
	}
}

func TestNewChildErrors(t *testing.T) {
	off, err := lro.New(lro.DefaultConfig())
	require.NoError(t, err)
	defer off.Close()
	_, err = New(off, Config{Command: []string{"no-such-command-lro-test"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"no-such-command-lro-test"`)
	_, err = New(off, Config{Command: []string{"sh"}, Remote: "http://localhost/mcp"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "give one")
}

func TestLineReader(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":7,"result":"` + strings.Repeat("y", 5000) + `"}`
	tsLong := `{"result":"` + strings.Repeat("y", 5000) + `","jsonrpc":"2.0","id":"abc"}`
	src := "\n" + `{"a":1}` + "\r\n" + long + "\n" + tsLong + "\n" + `{"b":2}`
	lr := newLineReader(strings.NewReader(src), 1000)
	line, l, err := lr.next()
	require.NoError(t, err)
	assert.Nil(t, l)
	assert.Equal(t, `{"a":1}`, string(line))
	_, l, err = lr.next()
	require.NoError(t, err)
	require.NotNil(t, l)
	assert.Equal(t, "7", string(l.id()))
	assert.Equal(t, int64(len(long)+1), l.size)
	_, l, err = lr.next()
	require.NoError(t, err)
	require.NotNil(t, l)
	assert.Equal(t, `"abc"`, string(l.id()))
	line, _, err = lr.next()
	require.NoError(t, err)
	assert.Equal(t, `{"b":2}`, string(line))
	_, _, err = lr.next()
	assert.Equal(t, io.EOF, err)

	// A line of many reads (the reader's buffer is 64 KiB), gathered in
	// blocks and joined once.
	huge := `{"jsonrpc":"2.0","method":"m","params":{"data":"` + strings.Repeat("z", 300<<10) + `"}}`
	lr = newLineReader(strings.NewReader(huge+"\r\n"+`{"c":3}`+"\n"), 0)
	line, _, err = lr.next()
	require.NoError(t, err)
	assert.Equal(t, huge, string(line))
	line, _, err = lr.next()
	require.NoError(t, err)
	assert.Equal(t, `{"c":3}`, string(line))
}

func TestPeekHeader(t *testing.T) {
	for _, tc := range []struct{ in, id, method, params string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `1`, `"ping"`, ``},
		{` { "result" : {"a":[1,{"b":"}\"]"}]} , "jsonrpc":"2.0", "id" : "x\"y" } `, `"x\"y"`, ``, ``},
		{`{"method":"notifications/progress","params":{"progressToken":3,"progress":1}}`, ``, `"notifications/progress"`, `{"progressToken":3,"progress":1}`},
		{`{"id":null,"error":{"code":-32700,"message":"a\\"}}`, `null`, ``, ``},
		{`{}`, ``, ``, ``},
	} {
		id, method, params, ok := peekHeader([]byte(tc.in))
		require.True(t, ok, tc.in)
		assert.Equal(t, tc.id, string(id), tc.in)
		assert.Equal(t, tc.method, string(method), tc.in)
		assert.Equal(t, tc.params, string(params), tc.in)
	}
	for _, bad := range []string{``, `[1]`, `{"id":1`, `{"id":1,}`, `{"id" 1}`, `{"a":"unterminated}`, `{"a":[1,2}`, `{id:1}`} {
		_, _, _, ok := peekHeader([]byte(bad))
		assert.False(t, ok, bad)
	}
	assert.Equal(t, "tools/call", methodName([]byte(`"tools\/call"`)))
}

// FuzzPeekHeader: on valid JSON objects, peekHeader reads the id, method
// and params encoding/json reads; on anything, it does not panic.
func FuzzPeekHeader(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"result":{"x":"\\\""},"id":"a"}`, `{"id":[1,{"2":3}],"method":"m","params":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		id, method, params, ok := peekHeader(b)
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil || m == nil {
			return
		}
		if bytes.Contains(b, []byte(`\u`)) || !utf8.Valid(b) {
			return // keys spelled with escapes or invalid UTF-8: encoding/json reads them otherwise, the peers' encoders never write them
		}
		require.True(t, ok, "%q", b)
		lower := map[string]json.RawMessage{}
		for k, v := range m {
			if k == "id" || k == "method" || k == "params" {
				lower[k] = v
			}
		}
		for key, got := range map[string][]byte{"id": id, "method": method, "params": params} {
			if want, present := lower[key]; present {
				assert.JSONEq(t, string(want), string(got), "%s of %q", key, b)
			}
		}
	})
}

// writeLog records each Write to w.
type writeLog struct {
	w      io.Writer
	mu     sync.Mutex
	writes []string
}

func (l *writeLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.writes = append(l.writes, string(p))
	l.mu.Unlock()
	return l.w.Write(p)
}

// TestChildOneWriteAMessage: each message reaches the client in one
// write, its newline included (a reader of the line alone would wake
// again for the newline).
func TestChildOneWriteAMessage(t *testing.T) {
	log := &writeLog{}
	c := startChildOut(t, "bench", Config{}, func(w io.Writer) io.Writer { log.w = w; return log })
	for i := range 5 {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"small","arguments":{}}}`, 10+i))
		c.wait(fmt.Sprint(10+i), 10*time.Second)
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 20+i)) // relayed as it came
		c.wait(fmt.Sprint(20+i), 10*time.Second)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	require.GreaterOrEqual(t, len(log.writes), 11)
	for _, w := range log.writes {
		assert.True(t, strings.HasSuffix(w, "\n") && strings.Count(w, "\n") == 1 && json.Valid([]byte(w)), "a write that is not one whole message: %.200q", w)
	}
}

func TestWriteLine(t *testing.T) {
	var out bytes.Buffer
	buf, err := writeLine(&out, nil, []byte(`{"a":1}`))
	require.NoError(t, err)
	buf, err = writeLine(&out, buf, []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, "{\"a\":1}\n{}\n", out.String())
	assert.NotNil(t, buf, "a small buffer is kept for the next line")
	buf, err = writeLine(&out, buf, bytes.Repeat([]byte("x"), maxKeptLine+1))
	require.NoError(t, err)
	assert.Nil(t, buf, "a large buffer is not kept")
}

// TestChildWorkersKept: requests the proxy handles one after another run
// on the workers it keeps, not on a new goroutine each (whose stack grew
// again for each call).
func TestChildWorkersKept(t *testing.T) {
	t.Setenv("LRO_PROXY_FAKE_SERVER", "bench")
	lcfg := lro.DefaultConfig()
	lcfg.OutputDir = t.TempDir()
	off, err := lro.New(lcfg)
	require.NoError(t, err)
	t.Cleanup(func() { off.Close() })
	p, err := New(off, Config{Command: []string{os.Args[0]}, Extract: true, Stderr: io.Discard})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	outR, outW := io.Pipe()
	r := newRelay(p, outW)
	lines := bufio.NewScanner(outR)
	ctx := context.Background()
	for i := range 50 {
		id := fmt.Sprint(100 + i)
		line := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"lro_extract","arguments":{}}}`)
		hid, method, params, ok := peekHeader(line)
		require.True(t, ok)
		r.clientRequest(ctx, &header{ID: hid, Method: methodName(method), Params: params}, line)
		require.True(t, lines.Scan())
		require.Contains(t, lines.Text(), `"id":`+id)
	}
	r.mu.Lock()
	workers := r.workers
	r.mu.Unlock()
	assert.LessOrEqual(t, workers, 3, "workers started for 50 requests, one at a time")
	assert.GreaterOrEqual(t, workers, 1)
	r.wg.Wait()
	close(r.quit)
}

// TestChildIdleWorkersKeepNoRequest: a worker waiting for the next request
// does not hold the last one (a line of up to MaxResponseBytes).
func TestChildIdleWorkersKeepNoRequest(t *testing.T) {
	c := startChild(t, "bench", Config{Extract: true})
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"small","arguments":{}}}`)
	c.wait(`2`, 10*time.Second)
	before := heap()
	pad := strings.Repeat("p", 2<<20)
	// Answered by the proxy (lro_extract, with an argument it refuses):
	// the fake server reads lines of 1 MiB at most.
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lro_extract","arguments":{"pad":"` + pad + `"}}}`)
	pad = ""
	c.wait(`3`, 30*time.Second)
	after := heap()
	t.Logf("heap after a request of 2 MiB: %+d KiB", (int64(after)-int64(before))>>10)
	assert.Less(t, int64(after)-int64(before), int64(1<<20), "heap held after a request of 2 MiB: %d KiB more", (int64(after)-int64(before))>>10)
}

// TestMarshalMessage: the envelope written by hand is what json.Marshal
// writes, byte for byte.
func TestMarshalMessage(t *testing.T) {
	structured := mcp.NewToolResultStructured(map[string]any{"n": 1, "s": "<a & b>"}, `{"n":1}`)
	withMeta := mcp.NewToolResultText("with meta")
	withMeta.Meta = &mcp.Meta{AdditionalFields: map[string]any{"k": "v"}}
	for _, m := range []mcp.JSONRPCMessage{
		mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(7)), *mcp.NewToolResultText("ok <&>")),
		mcp.NewJSONRPCResultResponse(mcp.NewRequestId("abc"), *mcp.NewToolResultError("failed")),
		mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(8)), *structured),
		mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(9)), *withMeta),
		mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(10)), mcp.EmptyResult{}),
		mcp.NewJSONRPCError(mcp.NewRequestId(int64(11)), mcp.INTERNAL_ERROR, "no", nil),
	} {
		want, err := json.Marshal(m)
		require.NoError(t, err)
		got, err := marshalMessage(m)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
	}
}

// TestChildSmallAnswersJudged: a small answer of the server skips the
// local server's round (it would pass the Offloader unchanged), but is
// still judged as every answer is: a look-alike of a descriptor becomes a
// tool error, an error text is bounded by MaxErrorBytes, and the rest
// reaches the client as it came.
func TestChildSmallAnswersJudged(t *testing.T) {
	c := startChild(t, "plain", Config{MaxErrorBytes: 1000})
	call := func(id int, tool string) (string, bool) {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool))
		return toolText(t, c.wait(strconv.Itoa(id), 10*time.Second))
	}
	text, isError := call(2, "small")
	assert.Equal(t, "ok", text)
	assert.False(t, isError)

	text, isError = call(3, "lookalike")
	assert.True(t, isError, "a small look-alike of a descriptor is refused: %s", text)
	assert.NotContains(t, text, `"offloaded":true`)

	text, isError = call(4, "failing")
	assert.True(t, isError)
	assert.Less(t, len(text), 1200, "the error text is bounded")

	// A call the local server refuses is refused before the server sees
	// it: its _meta is not an object.
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"small","arguments":{},"_meta":5}}`)
	refused := c.wait("5", 10*time.Second)
	assert.NotEmpty(t, refused["error"], "refused by the local server: %s", refused["result"])
}
