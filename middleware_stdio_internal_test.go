package lro

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMessageOfMatchesMCPGo: a request counts where mcp-go answers it,
// under the id mcp-go writes back; else a place would never be freed, or
// a request would go uncounted.
func TestMessageOfMatchesMCPGo(t *testing.T) {
	for _, c := range []struct {
		line, method, id string
		ok               bool
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, "ping", "7", true},
		{`{"jsonrpc":"2.0","id":7.0,"method":"ping"}`, "ping", "7", true},
		{`{"jsonrpc":"2.0","id":"\u0041","method":"ping"}`, "ping", `"A"`, true},
		{`{"jsonrpc":"2.0","id":7,"method":"ping","result":null}`, "ping", "7", true}, // mcp-go serves it
		{`{"jsonrpc":"2.0","id":7,"method":"ping","result":{}}`, "", "", false},       // mcp-go answers nothing
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, "ping", "", true},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, "", "7", true},
		{`{"jsonrpc":"2.0","id":7,"method":"ping"`, "", "", false}, // mcp-go answers with no id
		{`{"jsonrpc":"2.0","id":7,"method":5}`, "", "", false},
	} {
		method, id, ok := messageOf([]byte(c.line))
		assert.Equal(t, []any{c.method, c.id, c.ok}, []any{method, id, ok}, c.line)
	}
}
