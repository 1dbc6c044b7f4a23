package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/mcpgo"
	"github.com/mcplro/lro/proxy"
)

// laterRemote is a remote whose answers carry what mcp-go's types do not
// model, as a server in another language sends it: "required": false on
// a prompt argument, a field of a later version on a tool, and a
// resources/templates/list it lacks ("Method not found") although it
// declares resources.
func laterRemote(t *testing.T) string {
	s := server.NewMCPServer("later", "1.0.0", server.WithPromptCapabilities(true), server.WithResourceCapabilities(false, true))
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo"), nil
	})
	s.AddPrompt(mcp.NewPrompt("greet", mcp.WithArgument("who")), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("a greeting", nil), nil
	})
	s.AddResource(mcp.NewResource("doc://readme", "readme"), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: "the readme"}}, nil
	})
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &req) == nil && req.Method == string(mcp.MethodResourcesTemplatesList) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`))
			return
		}
		if req.Method == "x/echo" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"got":` + string(body) + `}}`))
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		body = bytes.ReplaceAll(rec.Body.Bytes(), []byte(`{"name":"who"}`), []byte(`{"name":"who","required":false,"icons":[]}`))
		_, _ = w.Write(bytes.ReplaceAll(body, []byte(`"name":"echo"`), []byte(`"name":"echo","later":{"x":1}`)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestServeRelaysRemoteAsItCame: through Serve, the remote's prompt and
// tool listings reach the client as the remote sent them, and a template
// listing the remote lacks is the proxy's own lro:// templates; for a
// client of either generation, spoken to the remote in the client's (a
// client of 2026-07-28 without initialize, each request naming its
// version in _meta).
func TestServeRelaysRemoteAsItCame(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { serveRelaysRemoteAsItCame(t, version) })
	}
}

func serveRelaysRemoteAsItCame(t *testing.T, version string) {
	modern := version >= "2026-07-28"
	p, _ := startProxy(t, laterRemote(t), proxy.Config{Extract: true})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = p.Serve(context.Background(), inR, outW); outW.Close() }()
	t.Cleanup(func() { inW.Close() })
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	askWith := func(id, method, params string) map[string]json.RawMessage {
		t.Helper()
		if modern { // the version, the client's capabilities and its name in _meta
			params = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}},` + strings.TrimPrefix(params, "{")
			params = strings.Replace(params, "},}", "}}", 1)
		}
		_, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":"`+id+`","method":"`+method+`","params":`+params+`}`+"\n")
		require.NoError(t, err)
		deadline := time.Now().Add(20 * time.Second)
		for lines.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(lines.Bytes(), &m) == nil && string(m["id"]) == `"`+id+`"` {
				return m
			}
			require.True(t, time.Now().Before(deadline), "no answer to %s", method)
		}
		t.Fatalf("the proxy closed its output before answering %s", method)
		return nil
	}
	ask := func(id, method string) map[string]json.RawMessage { return askWith(id, method, `{}`) }
	if modern {
		d := ask("d", string(mcp.MethodServerDiscover))
		require.Contains(t, string(d["result"]), version, "%s", d["error"])
	} else { // as a client does, the rest once initialize is answered
		i := askWith("i", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
		require.Contains(t, string(i["result"]), version, "%s", i["error"])
		_, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		require.NoError(t, err)
	}
	_ = ask("p0", "ping")

	prompts := ask("p", string(mcp.MethodPromptsList))
	assert.Contains(t, string(prompts["result"]), `{"name":"who","required":false,"icons":[]}`, "%s", prompts["error"])

	templates := ask("t", string(mcp.MethodResourcesTemplatesList))
	var res struct {
		Templates []struct {
			URITemplate string `json:"uriTemplate"`
		} `json:"resourceTemplates"`
	}
	require.NoError(t, json.Unmarshal(templates["result"], &res), "%s", templates["error"])
	require.NotEmpty(t, res.Templates)
	for _, tp := range res.Templates {
		assert.True(t, strings.HasPrefix(tp.URITemplate, "lro://files/"), tp.URITemplate)
	}
	// A method mcp-go does not know reaches the remote, its params as the
	// client sent them, and the remote's answer the client.
	echo := askWith("x", "x/echo", `{"b":2,"a":[1]}`)
	assert.Contains(t, string(echo["result"]), `"method":"x/echo"`, "%s", echo["error"])
	assert.Contains(t, string(echo["result"]), `"a":[1],"b":2`)
	if modern {
		assert.Contains(t, string(echo["result"]), `"proxy":true`, "the proxy announced on protocol 2026-07-28")
	} else {
		assert.NotContains(t, string(echo["result"]), `io.modelcontextprotocol/protocolVersion`, "the remote spoken to in 2026-07-28 for a client of %s", version)
	}
	tools := ask("l", string(mcp.MethodToolsList))
	assert.Contains(t, string(tools["result"]), `"later":{"x":1}`, "the remote's tool as it listed it")
	assert.Contains(t, string(tools["result"]), `"name":"lro_extract"`)

	resources := ask("r", string(mcp.MethodResourcesList))
	assert.Contains(t, string(resources["result"]), `"doc://readme"`)
}

// TestServeRelaysRemoteRequestsAsTheyCame: through Serve, the remote's
// elicitation request reaches the client as the remote wrote it (its
// form's fields in their order, not sorted by name), and the client's
// answer reaches the remote as the client wrote it; at the protocol the
// proxy negotiates (the client's, 2025-11-25) as at the one pinned. Before,
// the proxy negotiated 2026-07-28 with the remote, where mcp-go refuses
// requests of its own to the client ("server-initiated requests are not
// supported in protocol version 2026-07-28 or later"), so the call failed
// unless the protocol was pinned.
func TestServeRelaysRemoteRequestsAsTheyCame(t *testing.T) {
	for _, pinned := range []string{"", "2025-11-25"} {
		t.Run("protocol="+pinned, func(t *testing.T) { serveRelaysRemoteRequests(t, pinned) })
	}
}

func serveRelaysRemoteRequests(t *testing.T, pinned string) {
	s := server.NewMCPServer("asks", "1.0.0", server.WithElicitation())
	schema := `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}}}`
	s.AddTool(mcp.NewTool("ask"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{Message: "who?", RequestedSchema: json.RawMessage(schema)}})
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res.Content)
		return mcp.NewToolResultText(string(res.Action) + " " + string(b)), nil
	})
	h := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(h.Close)
	p, _ := startProxy(t, h.URL, proxy.Config{ProtocolVersion: pinned})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = p.Serve(context.Background(), inR, outW); outW.Close() }()
	t.Cleanup(func() { inW.Close() })
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	send := func(line string) {
		_, err := io.WriteString(inW, line+"\n")
		require.NoError(t, err)
	}
	next := func() map[string]json.RawMessage {
		t.Helper()
		for lines.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(lines.Bytes(), &m) == nil && (m["method"] != nil || string(m["id"]) != `"i"`) {
				return m
			}
		}
		t.Fatal("the proxy closed its output")
		return nil
	}
	send(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	ask := next()
	require.Equal(t, `"elicitation/create"`, string(ask["method"]), "%v", ask)
	assert.Contains(t, string(ask["params"]), `"properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}}`)
	send(`{"jsonrpc":"2.0","id":` + string(ask["id"]) + `,"result":{"action":"accept","content":{"zeta":"z","alpha":"a"}}}`)
	res := next()
	require.Equal(t, `"c"`, string(res["id"]), "%s", res["result"])
	assert.Contains(t, string(res["result"]), `accept {\"alpha\":\"a\",\"zeta\":\"z\"}`)
}

// TestServeBoundsUnreadAnswers: through Serve in front of a remote, the
// requests the proxy answers itself (ping here; lro:// reads alike) hold
// places of the admission mcpgo.ServeStdio has: a client that sends many
// and reads none is read from no further once mcpgo.MaxStdioRequests
// answers wait to be written. Before, every request was read and each
// held its answer (500 of 500 taken).
func TestServeBoundsUnreadAnswers(t *testing.T) {
	t.Parallel() // it mostly waits (for the pacer, a timeout), and shares nothing
	p, _ := startProxy(t, laterRemote(t), proxy.Config{})
	inR, inW := io.Pipe()
	_, outW := io.Pipe() // never read
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); inW.Close(); outW.Close() })
	go func() { _ = p.Serve(ctx, inR, outW) }()

	const sent = 500
	var taken atomic.Int64
	go func() {
		for i := range sent {
			if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i); err != nil {
				return
			}
			taken.Add(1)
		}
	}()
	// Wait until the proxy stops reading: the count holds still for a
	// while, or every request was taken. A slow machine can only make
	// this wait longer, not make it fail.
	last, still := int64(-1), 0
	for still < 10 && taken.Load() < sent {
		time.Sleep(100 * time.Millisecond)
		if n := taken.Load(); n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
	assert.Less(t, taken.Load(), int64(mcpgo.MaxStdioRequests+8), "requests read from a client that reads no answer")
}

// TestServeNotificationsBeforeAnswer: through Serve, every log message the
// remote sends on a call's stream reaches the client before the call's
// answer, as it came. Before, they went out on the local server's
// notification goroutine, and the last came after the answer at times
// (the conformance suite's tools-call-with-logging and
// tools-call-with-progress through lro-proxy -remote, nearly every run).
func TestServeNotificationsBeforeAnswer(t *testing.T) {
	const calls, notes = 20, 5
	s := &stubRemote{discover: "-", notes: notes}
	p, _ := startProxy(t, s.start(t), proxy.Config{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = p.Serve(context.Background(), inR, outW); outW.Close() }()
	t.Cleanup(func() { inW.Close() })
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	send := func(line string) {
		_, err := io.WriteString(inW, line+"\n")
		require.NoError(t, err)
	}
	// until returns the notifications/message lines read before the
	// message with id.
	until := func(id string) (seen int) {
		t.Helper()
		for lines.Scan() {
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(lines.Bytes(), &m), lines.Text())
			if string(m["id"]) == id {
				return seen
			}
			if string(m["method"]) == `"notifications/message"` {
				seen++
			}
		}
		t.Fatal("the proxy closed its output")
		return 0
	}
	send(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	until(`"i"`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	late := 0
	for i := range calls {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, i))
		// The notifications of the call before, if any came after its
		// answer, are counted here: a shortfall tells.
		late += max(0, notes-until(fmt.Sprint(i)))
	}
	assert.Zero(t, late, "log messages of %d calls that came after the call's answer", calls)
}
