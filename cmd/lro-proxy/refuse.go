package main

import (
	"bufio"
	"encoding/json"
	"io"
	"time"
)

// refuseWait bounds how long a proxy that cannot start waits for its
// client's first request, to answer it with the reason.
const refuseWait = 10 * time.Second

// refuseClient answers each request the client sends on in (its
// initialize, or server/discover and then initialize for a client of
// protocol 2026-07-28 that falls back) with a JSON-RPC error that says why
// the proxy cannot serve, on out: a host shows its client the reason,
// where "Connection closed" alone sends the user to the host's log. It
// returns when in ends, or after refuseWait.
func refuseClient(in io.Reader, out io.Writer, why error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
				continue // a notification, or not a request
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
				"code": -32603, "message": "lro-proxy cannot start: " + why.Error(),
			}})
			if _, err := out.Write(append(b, '\n')); err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(refuseWait):
	}
}
