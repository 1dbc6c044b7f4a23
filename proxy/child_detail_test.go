package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// detailServer is the fake local server of mode "detail": a memory server
// of its own shape whose recall_memories declares a detail argument of
// its own (["brief","full"]), and whose list_memories declares none. Each
// answers a call with limit above 10 with that many records of about 650 bytes,
// and a smaller one with its arguments as it got them.
func detailServer() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	w := bufio.NewWriter(os.Stdout)
	reply := func(id json.RawMessage, result string) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
	}
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`)
		case "tools/list":
			reply(m.ID, `{"tools":[`+
				`{"name":"recall_memories","inputSchema":{"type":"object","properties":{"limit":{"type":"integer"},"detail":{"type":"string","enum":["brief","full"]}}}},`+
				`{"name":"list_memories","inputSchema":{"type":"object","properties":{"limit":{"type":"integer"}}}}]}`)
		case "tools/call":
			var args struct {
				Limit int `json:"limit"`
			}
			_ = json.Unmarshal(m.Params.Arguments, &args)
			text := string(m.Params.Arguments)
			if args.Limit > 10 {
				var recs []map[string]any
				for i := range args.Limit {
					recs = append(recs, map[string]any{"id": fmt.Sprintf("m%d", i), "title": "t", "content": strings.Repeat("a memory of its own shape ", 23), "score": 0.5})
				}
				b, _ := json.Marshal(recs)
				text = string(b)
			}
			b, _ := json.Marshal(text)
			reply(m.ID, `{"content":[{"type":"text","text":`+string(b)+`}]}`)
		}
		w.Flush()
	}
}

// TestChildToolsOwnDetail: through the proxy of a local server, a tool's
// own detail argument ("brief", which its input schema declares) reaches
// it as sent, its small answer inline and its large one offloaded; a tool
// that declares no detail still gets lro's error for it (issue 39, item 4).
func TestChildToolsOwnDetail(t *testing.T) {
	c := startChild(t, "detail", Config{})
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Contains(t, string(c.wait("2", 10*time.Second)["result"]), "recall_memories")
	call := func(id int, tool string, args string) (string, bool) {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
		return toolText(t, c.wait(strconv.Itoa(id), 10*time.Second))
	}

	text, isError := call(3, "recall_memories", `{"limit":5,"detail":"brief"}`)
	assert.False(t, isError, text)
	assert.JSONEq(t, `{"limit":5,"detail":"brief"}`, text, "the tool's own argument reaches it as sent, and its answer passes inline")

	text, isError = call(4, "recall_memories", `{"limit":500,"detail":"brief"}`)
	assert.False(t, isError, text)
	assert.Contains(t, text, `"offloaded":true`, "a large answer is offloaded")

	text, isError = call(5, "list_memories", `{"limit":5,"detail":"brief"}`)
	assert.True(t, isError, "a tool that declares no detail: lro's level is read, and refused: %s", text)
	assert.Contains(t, text, `want "light", "medium" or "full"`)
}
