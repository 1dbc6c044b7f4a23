package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/mcpgo"
	"github.com/mcplro/lro/proxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SEP-2549 (protocol 2026-07-28): a resources/read of an offloaded file
// went out with mcp-go's default ttlMs of 0. An offloaded file is one
// caller's until it expires: cacheScope "private", ttlMs the time to its
// expiry. A request of an earlier protocol gets neither field.
func TestResourceReadCacheHintsMCPGo(t *testing.T) {
	o := newOffloader(t, nil)
	checkCacheHints(t, o, server.NewMCPServer("cache", "1", mcpgo.ServerOption(o)))
}

// The proxy's own lro:// reads carry the same hints.
func TestResourceReadCacheHintsProxy(t *testing.T) {
	rs := server.NewMCPServer("remote", "1")
	rs.AddTool(mcpgomcp.NewTool("t"), mcpgoBoundHandler(boundResult{texts: []string{"ok"}}))
	remote := httptest.NewServer(server.NewStreamableHTTPServer(rs))
	t.Cleanup(remote.Close)
	o := newOffloader(t, nil)
	p, err := proxy.New(o, proxy.Config{Remote: remote.URL, CallTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	checkCacheHints(t, o, p.Server())
}

// checkCacheHints reads a file o offloads through s, at protocol
// 2026-07-28 and before it.
func checkCacheHints(t *testing.T, o *lro.Offloader, s *server.MCPServer) {
	recs := make([]json.RawMessage, 50)
	for i := range recs {
		recs[i] = json.RawMessage(fmt.Sprintf(`{"id":%d}`, i))
	}
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "export", Records: recs, Generic: true, Tokens: 1 << 20})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)
	uri := "lro://files/" + filepath.Base(out.Response.FilePath) + "/lines/1-2"

	read := func(meta string) map[string]json.RawMessage {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":%q%s}}`, uri, meta)
		b, err := json.Marshal(s.HandleMessage(context.Background(), []byte(req)))
		require.NoError(t, err)
		var resp struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(b, &resp))
		require.NotNil(t, resp.Result, "a result: %s", b)
		return resp.Result
	}
	modern := read(`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`)
	assert.JSONEq(t, `"private"`, string(modern["cacheScope"]), "an offloaded file is one caller's")
	var ttl int64
	require.NoError(t, json.Unmarshal(modern["ttlMs"], &ttl))
	assert.Positive(t, ttl, "cached until the file expires")
	assert.LessOrEqual(t, ttl, o.Config().TTL().Milliseconds()+1000, "and no longer")

	legacy := read("")
	assert.Nil(t, legacy["ttlMs"], "no field of 2026-07-28 before it")
}
