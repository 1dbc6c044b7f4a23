package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// hostileServer is the fake local server of the tests of issue 30: a
// server that answers what the proxy cannot read, churns its tools, or
// leaves a process behind. fakeServer hands it the modes that start with
// "hostile-":
//
//   - tools/call of "held" is answered (with a text of 204 KB) only when
//     the next message comes, whatever it is; prompts/get is answered with
//     no messages;
//   - tools/call of a tool of UnreadableAnswers answers with 200 KB the
//     proxy cannot read as a tool result; "smallunread" a result of a few
//     bytes without content; tasks/result answers with a tool result of
//     200 KB;
//   - "hostile-churn" lists 200 tools of 4 KiB under new names at every
//     listing, and announces a change after each (and 1,000 at once when
//     "announce" is called); "hostile-bigtools"
//     lists 1,100 tools of 4 KiB (4.6 MB, over DefaultMaxToolsBytes);
//   - "hostile-orphan" leaves a process behind (see orphanServer);
//   - tools/call of "exit" exits with status 3.
func hostileServer(mode string) {
	if start := hostileStarts[mode]; start != nil {
		start()
	}
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	reply := func(id json.RawMessage, result string) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
	}
	var held json.RawMessage
	listings := 0
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if held != nil {
			reply(held, `{"content":[{"type":"text","text":"`+strings.Repeat("y", 204<<10)+`"}]}`)
			held = nil
		}
		switch m.Method {
		case "initialize":
			reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"prompts":{}},"serverInfo":{"name":"hostile","version":"1"}}`)
		case "ping":
			reply(m.ID, `{}`)
		case "prompts/get":
			reply(m.ID, `{"messages":[]}`)
		case "tasks/result":
			reply(m.ID, `{"content":[{"type":"text","text":"`+strings.Repeat("t", 200<<10)+`"}]}`)
		case "tools/list":
			listings++
			reply(m.ID, churnTools(mode, listings))
			if mode == "hostile-churn" {
				fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			}
		case "tools/call":
			switch m.Params.Name {
			case "held":
				held = m.ID
			case "announce":
				for range 1000 {
					fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
				}
				reply(m.ID, `{"content":[{"type":"text","text":"announced"}]}`)
			case "exit":
				w.Flush()
				os.Exit(3)
			case "smallunread":
				reply(m.ID, `{"data":"small"}`)
			default:
				if answer, ok := UnreadableAnswers[m.Params.Name]; ok {
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,%s}`+"\n", m.ID, answer)
					break
				}
				reply(m.ID, `{"content":[{"type":"text","text":"ok"}]}`)
			}
		}
		w.Flush()
	}
}

// UnreadableAnswers are the answers to a tools/call, by tool, that the
// proxy cannot read as a tool result, 200 KB each: the JSON-RPC response's
// member after its id. The hostile local server answers them, and so does
// the hostile remote of TestProxyRemoteAnswersItCannotReadAreGated.
var UnreadableAnswers = func() map[string]string {
	big := strings.Repeat("x", 200<<10)
	return map[string]string{
		"nocontent":     `"result":{"data":"` + big + `"}`,
		"nullcontent":   `"result":{"content":null,"data":"` + big + `"}`,
		"unknowntype":   `"result":{"content":[{"type":"hologram","text":"` + big + `"}]}`,
		"notype":        `"result":{"content":[{"text":"` + big + `"}]}`,
		"inputrequired": `"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"` + big + `","requestedSchema":{"type":"object"}}}}}`,
		"rpcerror":      `"error":{"code":-32000,"message":"` + big + `","data":"` + big + `"}`,
	}
}()

// hostileStarts are what modes of hostileServer do before they serve,
// by mode, on the systems that have them (see child_orphan_unix_test.go).
var hostileStarts = map[string]func(){}

// churnTools is the tools/list result of the listing-th listing of mode.
func churnTools(mode string, listing int) string {
	n, prefix := 2, "tool"
	switch mode {
	case "hostile-churn":
		n, prefix = 200, fmt.Sprintf("gen%d-tool", listing)
	case "hostile-bigtools":
		n = 1100
	}
	desc := strings.Repeat("d", 4<<10)
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"%s%d","description":"%s","inputSchema":{"type":"object"}}`, prefix, i, desc)
	}
	b.WriteString(`]}`)
	return b.String()
}
