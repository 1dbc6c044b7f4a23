package proxy

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChildRefusesIDInFlight: a client that sends a request with the id
// of one still in flight (tools/call 77, then prompts/get 77) gets an
// error naming the id for the second; the first is answered, judged, as
// soon as the server answers it. Before: the call's 204 KB result went to
// the client raw as the answer to prompts/get 77, and the call held its
// place until its timeout (5 minutes).
func TestChildRefusesIDInFlight(t *testing.T) {
	c := startChild(t, "hostile-ids", Config{})
	c.send(`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"held","arguments":{}}}`)
	c.send(`{"jsonrpc":"2.0","id":77,"method":"prompts/get","params":{"name":"p"}}`)
	refused := c.wait("77", 10*time.Second)
	t.Logf("the answer to the second request 77: %d bytes", len(refused["error"])+len(refused["result"]))
	require.NotEmpty(t, refused["error"], "the second request 77 is refused")
	assert.Contains(t, string(refused["error"]), "77")
	assert.Contains(t, string(refused["error"]), "in flight")
	// The server answers the held call at its next message: a ping, sent
	// again each second, since the proxy may hand the server a ping
	// before the call it judges (then the ping comes first, and the call
	// is held until the next).
	call := answeredAfterPings(t, c, "77")
	require.NotEmpty(t, call["result"], "the call 77 is answered: %s", call["error"])
	assert.Less(t, len(call["result"]), 16<<10, "the call's 204 KB result is judged")
}

// answeredAfterPings sends c a ping each second until the answer to id
// comes, and returns it; it fails after two minutes.
func answeredAfterPings(t *testing.T, c *childClient, id string) map[string]json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; time.Now().Before(deadline); i++ {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`, i))
		tick := time.NewTimer(time.Second)
	read:
		for {
			select {
			case m, ok := <-c.lines:
				require.True(t, ok, "the proxy closed its output")
				if string(m["id"]) == id {
					tick.Stop()
					return m
				}
			case <-tick.C:
				break read
			}
		}
	}
	t.Fatalf("no answer to %s within two minutes of pings", id)
	return nil
}
