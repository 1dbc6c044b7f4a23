package proxy_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/proxy"
)

// TestProxyRemoteAnswersItCannotReadAreGated: behind -remote, the
// answers of TestChildAnswersItCannotReadAreGated (a result without
// content or with null content, an item of an unknown type or of none, a
// request for input, a JSON-RPC error, 200 KB each) reach the client
// within the threshold and the gate's notice, as through the child path.
func TestProxyRemoteAnswersItCannotReadAreGated(t *testing.T) {
	calls := map[string]http.HandlerFunc{}
	for tool, answer := range proxy.UnreadableAnswers {
		calls[tool] = func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,%s}`, answer)
		}
	}
	rem := startHostile(t, calls)
	p, off := startProxy(t, rem.http.URL, proxy.Config{})
	c := connect(t, p.Server())
	bound := off.Config().ThresholdTokens + lro.NoticeTokens
	for _, tool := range slices.Sorted(maps.Keys(calls)) {
		res, _ := callProxy(t, c, tool)
		var text strings.Builder
		for _, item := range res.Content {
			if tc, ok := item.(mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		t.Logf("%s: %d B of text, isError %v", tool, text.Len(), res.IsError)
		assert.LessOrEqual(t, off.EstimateTokens([]byte(text.String())), bound, "%s: within the threshold and the notice", tool)
	}
}
