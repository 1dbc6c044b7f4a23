package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// bigServerEnv makes the test binary a stdio MCP server whose messages
// are as large as its value says, in bytes (bigServer).
const bigServerEnv = "LRO_PROXY_BIG_SERVER"

// bigServer serves, on stdio, tools whose messages are each about n bytes
// (n from bigServerEnv): "notify" sends a notifications/message of n
// bytes of data, then a notifications/progress of an n-byte message (to
// the call's progress token, when it sent one), then answers "ok";
// "meta" answers "ok" with n bytes of _meta; "answer" answers n bytes of
// JSON records in one text item. The messages are written as they are
// made, so that the server holds none of them whole.
func bigServer() {
	n, _ := strconv.Atoi(os.Getenv(bigServerEnv))
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	w := bufio.NewWriterSize(os.Stdout, 256<<10)
	// filler writes about n bytes of JSON string content: a log line
	// repeated, with a quote escaped in each, as logs have.
	filler := func(n int) {
		const line = `worker 7 said \"done\" after a long while; `
		for written := 0; written < n; written += len(line) {
			w.WriteString(line)
		}
	}
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		if m.Method == "tools/call" && m.Params.Name == "notify" {
			// The notifications come before the answer.
			w.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"big","data":"`)
			filler(n)
			w.WriteString("\"}}\n")
			if tok := m.Params.Meta.ProgressToken; len(tok) > 0 {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1,"total":2,"message":"`, tok)
				filler(n)
				w.WriteString("\"}}\n")
			}
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":`, m.ID)
		switch m.Method {
		case "initialize":
			w.WriteString(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"big","version":"1"}}`)
		case "tools/list":
			w.WriteString(`{"tools":[{"name":"notify","inputSchema":{"type":"object"}},{"name":"meta","inputSchema":{"type":"object"}},{"name":"answer","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			switch m.Params.Name {
			case "notify":
				w.WriteString(`{"content":[{"type":"text","text":"ok"}]}`)
			case "meta":
				w.WriteString(`{"content":[{"type":"text","text":"ok"}],"_meta":{"example.com/trace":"`)
				filler(n)
				w.WriteString(`"}}`)
			case "answer":
				w.WriteString(`{"content":[{"type":"text","text":"[`)
				const rec = `{\"id\":%d,\"note\":\"worker 7 said it was done after a long while\"},`
				for i, written := 0, 0; written < n; i++ {
					k, _ := fmt.Fprintf(w, rec, i)
					written += k
				}
				w.WriteString(`{\"id\":-1}]"}]}`)
			default:
				w.WriteString(`{"content":[{"type":"text","text":"no such tool"}],"isError":true}`)
			}
		default:
			w.WriteString(`{}`)
		}
		w.WriteString("}\n")
		w.Flush()
	}
}
