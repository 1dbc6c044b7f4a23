package lro_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcplro/lro/mcpgo"

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/testmcp"
	"github.com/mcplro/lro/proxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The proxy's rows of the bound matrix: the Offloader under test is the
// proxy's, its faults those of the proxy's own store, in front of a server
// that returns the cell's result as it is: with no offloading of its own,
// or on lro and told by the proxy's announcement to send results whole.
// A local server (lro-proxy -- COMMAND) and a raw remote write the result
// as a server in any language may (boundWire); a remote on mcp-go as
// mcp-go does.

// boundServerArg, followed by the name of a file, makes the test binary
// serve that file's answer, as the local server of the "proxy child" host.
// An argument, not a variable of the environment, so that the matrix's
// cells can run in parallel (t.Setenv forbids it).
const boundServerArg = "-lro.bound-server"

// TestMain makes the test binary the local server of the "proxy child"
// host when started with boundServerArg (see serveBoundAnswer).
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == boundServerArg {
		serveBoundAnswer(os.Args[2])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveBoundAnswer serves MCP on stdio, as a local server in any language
// would, until its input ends: one tool "t", whose call is answered with
// the file at path as it is then, the member of a JSON-RPC response after
// its id.
func serveBoundAnswer(path string) {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,`, m.ID)
		switch m.Method {
		case "initialize":
			out.WriteString(`"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bound","version":"1"}}`)
		case "tools/list":
			out.WriteString(`"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			answer, err := os.ReadFile(path)
			if err != nil {
				answer, _ = json.Marshal(err.Error())
				answer = append([]byte(`"error":{"code":-32603,"message":`), append(answer, '}')...)
			}
			out.Write(answer)
		case "ping":
			out.WriteString(`"result":{}`)
		default:
			out.WriteString(`"error":{"code":-32601,"message":"Method not found"}`)
		}
		out.WriteString("}\n")
		out.Flush()
	}
}

// boundWire is r as an MCP server writes its answer, the member of the
// JSON-RPC response after its id: the result mcp-go's handler returns,
// with content null when r has none, or the JSON-RPC error mcp-go makes of
// the handler's Go error; or r's wire, when it has one.
func boundWire(t *testing.T, r boundResult) []byte {
	if r.wire != "" {
		return []byte(`"result":` + r.wire)
	}
	res, err := mcpgoBoundHandler(r)(context.Background(), mcpgomcp.CallToolRequest{})
	if err != nil {
		msg, _ := json.Marshal(err.Error())
		return []byte(`"error":{"code":-32603,"message":` + string(msg) + `}`)
	}
	b, err := json.Marshal(res)
	require.NoError(t, err)
	if r.noContent {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &m))
		m["content"] = json.RawMessage("null")
		b, err = json.Marshal(m)
		require.NoError(t, err)
	}
	// As a server in another language may write it: invalid UTF-8 as it
	// is, where Go's encoder wrote U+FFFD.
	b = bytes.ReplaceAll(b, []byte(`\ufffd`), []byte("\xff"))
	return append([]byte(`"result":`), b...)
}

// openChild serves o as lro-proxy -- COMMAND does, in front of a local
// server process (this test binary, see TestMain) that answers each call
// with the cell's result, until the test ends; a cell's call is that of a
// client on the proxy's stdio, whose answer is read as it comes on the
// wire. The server and the proxy must end when the client does: the
// test fails otherwise.
func openChild(t *testing.T, o *lro.Offloader) boundCall {
	path := filepath.Join(t.TempDir(), "answer")
	p, err := proxy.New(o, proxy.Config{Command: []string{os.Args[0], boundServerArg, path}, Stderr: io.Discard})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := p.Serve(context.Background(), inR, outW)
		outW.CloseWithError(io.EOF)
		served <- err
	}()
	answers, left := make(chan map[string]json.RawMessage), make(chan struct{})
	go func() {
		defer close(answers)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 256<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["id"] != nil && m["method"] == nil {
				select {
				case answers <- m:
				case <-left: // read on to the end
				}
			}
		}
	}()
	id := 0
	request := func(t *testing.T, method, params string) map[string]json.RawMessage {
		id++
		sent := make(chan error, 1)
		go func() {
			_, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
			sent <- err
		}()
		timeout := time.After(time.Minute) // not a bound on speed: a call that never returns
		for {
			select {
			case m, ok := <-answers:
				require.True(t, ok, "the proxy closed its output before answering")
				if string(m["id"]) == fmt.Sprint(id) {
					require.NoError(t, <-sent)
					return m
				}
			case <-timeout:
				t.Fatalf("%s did not return", method)
			}
		}
	}
	init := request(t, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bound","version":"1"}}`)
	require.NotNil(t, init["result"], "initialize: %s", init["error"])
	_, err = io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	require.NoError(t, err)
	t.Cleanup(func() {
		close(left)
		inW.Close()
		select {
		case err := <-served:
			assert.NoError(t, err, "the proxy's Serve")
		case <-time.After(time.Minute):
			t.Error("the proxy did not return when its client left")
		}
	})
	return func(t *testing.T, r boundResult) boundAnswer {
		require.NoError(t, os.WriteFile(path, boundWire(t, r), 0o600))
		return wireBound(t, request(t, "tools/call", `{"name":"t","arguments":{}}`))
	}
}

// wireBound is what a client reads of m, the JSON-RPC response to a
// tools/call: of an error its message and data; of a result the text of
// its items (of any type, with a text), embedded resources and resource
// links, its structured content, its _meta, and the JSON of members MCP
// does not define.
func wireBound(t *testing.T, m map[string]json.RawMessage) boundAnswer {
	if e := m["error"]; e != nil {
		var rpc struct {
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		require.NoError(t, json.Unmarshal(e, &rpc))
		a := boundAnswer{isError: true, texts: []string{rpc.Message}}
		if len(rpc.Data) > 0 && string(rpc.Data) != "null" {
			a.texts = append(a.texts, string(rpc.Data))
		}
		return a
	}
	var res struct {
		Content []struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			URI         string `json:"uri"`
			Name        string `json:"name"`
			Description string `json:"description"`
			MIMEType    string `json:"mimeType"`
			Resource    *struct {
				Text string `json:"text"`
			} `json:"resource"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(m["result"], &res), "a result: %.300s", m["result"])
	a := boundAnswer{isError: res.IsError}
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(m["result"], &members))
	for k, v := range members {
		switch k {
		case "_meta":
			if string(v) != "null" {
				a.meta = v
			}
		case "content", "structuredContent", "isError", "resultType":
		default:
			a.texts = append(a.texts, string(v)) // a member no client reads, which a host may yet show
		}
	}
	for _, c := range res.Content {
		switch {
		case c.Type == "resource_link":
			a.links = append(a.links, c.URI+c.Name+c.Description+c.MIMEType)
		case c.Resource != nil:
			a.texts = append(a.texts, c.Resource.Text)
		case c.Text != "" || c.Type == "text":
			a.texts = append(a.texts, c.Text)
		}
	}
	if len(res.Structured) > 0 && string(res.Structured) != "null" {
		a.structured = res.Structured
	}
	return a
}

// remoteBoundAnswer serves r from a streamable-HTTP mcp-go server with no
// offloading of its own, behind the proxy of o (its Remote), and calls
// "t" from an in-process client of the proxy's server.
func remoteBoundAnswer(t *testing.T, o *lro.Offloader, r boundResult) boundAnswer {
	return proxiedBoundAnswer(t, o, r, server.NewMCPServer("bound", "1"), nil)
}

// lroRemoteBoundAnswer is remoteBoundAnswer with a remote that offloads
// on its own (an Offloader of its own, with no fault), which the proxy's
// announcement tells to send its results whole: only the proxy offloads.
func lroRemoteBoundAnswer(t *testing.T, o *lro.Offloader, r boundResult) boundAnswer {
	own := newOffloader(t, nil, lro.WithoutBuiltinTools(), lro.WithTool("t", lro.ToolPolicy{Generic: true}))
	a := proxiedBoundAnswer(t, o, r, server.NewMCPServer("bound", "1", mcpgo.ServerOption(own)), nil)
	written, err := os.ReadDir(own.Config().OutputDir)
	require.NoError(t, err)
	assert.Empty(t, written, "the remote offloaded nothing on its side")
	return a
}

// rawRemoteBoundAnswer is remoteBoundAnswer with a remote that answers
// the call with r as a server in any language may write it (boundWire):
// content null or missing, items of unknown or no type, invalid UTF-8.
func rawRemoteBoundAnswer(t *testing.T, o *lro.Offloader, r boundResult) boundAnswer {
	wire := boundWire(t, r)
	return proxiedBoundAnswer(t, o, r, server.NewMCPServer("bound", "1"), func(sdk http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method == http.MethodPost {
				body, _ := io.ReadAll(req.Body)
				req.Body = io.NopCloser(bytes.NewReader(body))
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,%s}`, m.ID, wire)
					return
				}
			}
			sdk.ServeHTTP(w, req)
		})
	})
}

// proxiedBoundAnswer serves r from s, on streamable HTTP (through wrap,
// when not nil), behind the proxy of o, and calls "t" from an in-process
// client of the proxy's server.
func proxiedBoundAnswer(t *testing.T, o *lro.Offloader, r boundResult, s *server.MCPServer, wrap func(http.Handler) http.Handler) boundAnswer {
	s.AddTool(mcpgomcp.NewTool("t"), mcpgoBoundHandler(r))
	var h http.Handler = server.NewStreamableHTTPServer(s)
	if wrap != nil {
		h = wrap(h)
	}
	remote := httptest.NewServer(h)
	t.Cleanup(remote.Close)
	p, err := proxy.New(o, proxy.Config{Remote: remote.URL, CallTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return mcpgoBound(testmcp.CallTool(t, testmcp.Connect(t, p.Server()), "t", nil))
}
