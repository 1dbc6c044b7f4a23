package proxy

import (
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
	c.send(`{"jsonrpc":"2.0","id":78,"method":"ping"}`) // the server answers the call now
	call := c.wait("77", 10*time.Second)
	require.NotEmpty(t, call["result"], "the call 77 is answered: %s", call["error"])
	assert.Less(t, len(call["result"]), 16<<10, "the call's 204 KB result is judged")
	if !c.seen["78"] {
		c.wait("78", 10*time.Second) // the ping, unless it came first
	}
}
