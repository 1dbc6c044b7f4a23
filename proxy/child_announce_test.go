package proxy

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChildAnnouncesPerRequest: a request of protocol 2026-07-28, which
// says who its client is in _meta, reaches the server with the proxy
// announced there (clientInfo.proxy and the proxy capability), and the
// rest of its _meta as it was; a request without such _meta goes as it
// came.
func TestChildAnnouncesPerRequest(t *testing.T) {
	c := startChild(t, "plain", Config{Extract: true})
	c.send(`{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"meta","arguments":{},"_meta":{"progressToken":7,` +
		`"io.modelcontextprotocol/clientInfo":{"name":"gosdk","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"experimental":{"x":{}},"roots":{}}}}}`)
	text, isErr := toolText(t, c.wait(`"d"`, 10*time.Second))
	require.False(t, isErr, text)
	var meta struct {
		Token int            `json:"progressToken"`
		Info  map[string]any `json:"io.modelcontextprotocol/clientInfo"`
		Caps  map[string]any `json:"io.modelcontextprotocol/clientCapabilities"`
		Proto string         `json:"io.modelcontextprotocol/protocolVersion"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &meta), text)
	assert.Equal(t, 7, meta.Token)
	assert.Equal(t, map[string]any{"name": "gosdk", "version": "1", "proxy": true}, meta.Info)
	assert.Equal(t, map[string]any{"roots": map[string]any{}, "experimental": map[string]any{
		"x": map[string]any{}, "io.github.mcplro/proxy": map[string]any{"structuredFromText": true}}}, meta.Caps)
	assert.Equal(t, "2026-07-28", meta.Proto)

	c.send(`{"jsonrpc":"2.0","id":"o","method":"tools/call","params":{"name":"meta","arguments":{},"_meta":{"progressToken":8}}}`)
	text, _ = toolText(t, c.wait(`"o"`, 10*time.Second))
	assert.JSONEq(t, `{"progressToken":8}`, text)
}

// TestChildDiscoverDeclaresOwn: the server's answer to server/discover
// (protocol 2026-07-28's initialize) comes back with the capabilities the
// proxy serves added, as initialize's does.
func TestChildDiscoverDeclaresOwn(t *testing.T) {
	c := startChild(t, "plain", Config{Extract: true})
	c.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{}}`)
	var res struct {
		Versions []string                   `json:"supportedVersions"`
		Caps     map[string]json.RawMessage `json:"capabilities"`
	}
	m := c.wait(`"d"`, 10*time.Second)
	require.NoError(t, json.Unmarshal(m["result"], &res), "%s", m["error"])
	assert.Equal(t, []string{"2026-07-28"}, res.Versions)
	assert.Contains(t, res.Caps, "prompts")
	assert.Contains(t, res.Caps, "tools", "lro_extract")
	assert.Contains(t, res.Caps, "resources", "the lro:// templates")
}

// TestChildListingTheServerLacks: a server that declares resources but
// answers resources/templates/list with "Method not found" (as
// server-postgres does): the client gets the proxy's lro:// templates.
func TestChildListingTheServerLacks(t *testing.T) {
	c := startChild(t, "resources", Config{Extract: true})
	c.send(`{"jsonrpc":"2.0","id":"t","method":"resources/templates/list"}`)
	var res struct {
		Templates []struct {
			URITemplate string `json:"uriTemplate"`
		} `json:"resourceTemplates"`
	}
	m := c.wait(`"t"`, 10*time.Second)
	require.NoError(t, json.Unmarshal(m["result"], &res), "%s", m["error"])
	require.NotEmpty(t, res.Templates)
	for _, tp := range res.Templates {
		assert.Contains(t, tp.URITemplate, "lro://files/")
	}
	c.send(`{"jsonrpc":"2.0","id":"r","method":"resources/list"}`)
	m = c.wait(`"r"`, 10*time.Second)
	assert.Contains(t, string(m["result"]), `"fake://a"`, "the server's listing, as it has one")
}

// TestChildIgnoringEOFIsNoWarning: a server that stays after the end of
// its input is ended with SIGTERM, as the MCP shutdown sequence expects:
// the proxy says so at Info, not as a warning.
func TestChildIgnoringEOFIsNoWarning(t *testing.T) {
	var log syncBuffer
	// The grace is waited out once (the server stays), and is the margin
	// of its death on SIGTERM, which a loaded machine delays.
	c := startChild(t, "stay", Config{StopGrace: time.Second, Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	c.in.Close()
	select {
	case err := <-c.done:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after the client disconnected")
	}
	assert.Contains(t, log.String(), "level=INFO msg=\"lro proxy: the server did not exit when its input ended; signalling it\"")
	assert.NotContains(t, log.String(), "level=WARN")
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestChildSmallAnswerAsItCame: a small result that the proxy has nothing
// to change in reaches the client as the server wrote it, with what
// mcp-go's types drop ("isError": false, a field of a later version).
func TestChildSmallAnswerAsItCame(t *testing.T) {
	c := startChild(t, "plain", Config{Extract: true})
	c.send(`{"jsonrpc":"2.0","id":"e","method":"tools/list"}`)
	c.wait(`"e"`, 10*time.Second)
	c.send(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"exact","arguments":{}}}`)
	m := c.wait(`"x"`, 10*time.Second)
	assert.Equal(t, `{"content":[{"type":"text","text":"ok"}],"isError":false,"later":{"x":1}}`, string(m["result"]))
}
