package proxy

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
)

// maxGatedAnswer is the most a client may receive of a tools/call answer
// through the proxy under the default threshold (1,600 tokens, about
// 6.4 KB) plus the exit gate's fixed notice: a descriptor, a cut text
// with its marker, or a bounded error.
const maxGatedAnswer = 16 << 10

// TestChildAnswersItCannotReadAreGated: the answers of a local server that
// the proxy cannot read as a tool result (content missing or null, an
// item of an unknown type or of none, a request for input, a JSON-RPC
// error), 200 KB each, reach the client through the exit gate, bounded.
// Before, each went to the client as it came: 204,811 to 204,945 B, the
// error 409,638 B; after, 6,675 to 6,714 B.
func TestChildAnswersItCannotReadAreGated(t *testing.T) {
	c := startChild(t, "hostile-unread", Config{})
	for i, tool := range slices.Sorted(maps.Keys(UnreadableAnswers)) {
		id := fmt.Sprint(100 + i)
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`)
		m := c.wait(id, 30*time.Second)
		size := len(m["result"]) + len(m["error"])
		t.Logf("%s: %d B", tool, size)
		assert.LessOrEqual(t, size, maxGatedAnswer, "%s: the answer is bounded", tool)
		bound := c.proxy.off.Config().ThresholdTokens + lro.NoticeTokens
		if tool == "rpcerror" {
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			require.NoError(t, json.Unmarshal(m["error"], &e), "%s: still a JSON-RPC error: %.300s", tool, m["result"])
			assert.Equal(t, -32000, e.Code, "the server's code")
			assert.True(t, strings.HasPrefix(e.Message, "xxxx"), "the server's message, cut: %.100s", e.Message)
			assert.Contains(t, e.Message, "[cut]", "marked cut")
			assert.LessOrEqual(t, c.proxy.off.EstimateTokens([]byte(e.Message)), bound, "the message within the threshold and the notice")
			continue
		}
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		require.NoError(t, json.Unmarshal(m["result"], &res), "%s: a result: %.300s", tool, m["error"])
		assert.Equal(t, tool == "inputrequired", res.IsError, "%s: a request for input, cut, is a tool error", tool)
		var text strings.Builder
		for _, item := range res.Content {
			text.WriteString(item.Text)
		}
		assert.Contains(t, text.String(), "[cut]", "%s: marked cut", tool)
		assert.LessOrEqual(t, c.proxy.off.EstimateTokens([]byte(text.String())), bound, "%s: within the threshold and the notice", tool)
	}
	// The result of a task is a tools/call answer too.
	c.send(`{"jsonrpc":"2.0","id":150,"method":"tasks/result","params":{"taskId":"t1"}}`)
	m := c.wait("150", 10*time.Second)
	t.Logf("tasks/result: %d B", len(m["result"])+len(m["error"]))
	assert.LessOrEqual(t, len(m["result"])+len(m["error"]), maxGatedAnswer, "the task's result is bounded")
	// A small answer the proxy cannot read still goes as it came.
	c.send(`{"jsonrpc":"2.0","id":200,"method":"tools/call","params":{"name":"smallunread","arguments":{}}}`)
	m = c.wait("200", 10*time.Second)
	assert.JSONEq(t, `{"data":"small"}`, string(m["result"]))
}
