package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/proxy"
)

// TestServeListingCacheHints (SEP-2549): through Serve, the template
// listing the remote lacks is the proxy's own lro:// templates, and under
// protocol 2026-07-28 it is private with ttlMs 0 (host.ListingTTLMs): it
// went out with no hints. Before 2026-07-28 nothing is added.
func TestServeListingCacheHints(t *testing.T) {
	p, _ := startProxy(t, laterRemote(t), proxy.Config{Extract: true})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = p.Serve(context.Background(), inR, outW); outW.Close() }()
	t.Cleanup(func() { inW.Close() })
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	ask := func(id, params string) map[string]json.RawMessage {
		t.Helper()
		_, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":"`+id+`","method":"resources/templates/list","params":`+params+`}`+"\n")
		require.NoError(t, err)
		for lines.Scan() {
			var m struct {
				ID     string                     `json:"id"`
				Result map[string]json.RawMessage `json:"result"`
				Error  json.RawMessage            `json:"error"`
			}
			if json.Unmarshal(lines.Bytes(), &m) == nil && m.ID == id {
				require.NotNil(t, m.Result, "%s", m.Error)
				assert.Contains(t, string(m.Result["resourceTemplates"]), `lro://files/`)
				return m.Result
			}
		}
		t.Fatal("the proxy closed its output before answering")
		return nil
	}
	_, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	require.NoError(t, err)

	modern := ask("m", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}`)
	assert.JSONEq(t, `"private"`, string(modern["cacheScope"]), "a listing of lro's templates is private")
	assert.JSONEq(t, `0`, string(modern["ttlMs"]), "and revalidated")

	legacy := ask("l", `{}`)
	assert.Nil(t, legacy["cacheScope"], "no field of 2026-07-28 before it")
	assert.Nil(t, legacy["ttlMs"], "no field of 2026-07-28 before it")
}
