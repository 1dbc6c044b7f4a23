package proxy

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modernMeta is the _meta of a request of protocol 2026-07-28.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`

// TestChildListingCacheHints (SEP-2549): the page of the template
// listing where the proxy adds its lro:// templates is private, with
// ttlMs 0 (host.ListingTTLMs), under protocol 2026-07-28: it went out
// with the server's hints, public for a minute; and a listing the server
// lacks, the proxy's own, went out with none. Before 2026-07-28 nothing
// is added.
func TestChildListingCacheHints(t *testing.T) {
	for _, mode := range []string{"hints", "resources"} {
		t.Run(mode, func(t *testing.T) {
			c := startChild(t, mode, Config{Extract: true})
			c.send(`{"jsonrpc":"2.0","id":"m","method":"resources/templates/list","params":{` + modernMeta + `}}`)
			modern := listingResult(t, c.wait(`"m"`, 10*time.Second))
			assert.JSONEq(t, `"private"`, string(modern["cacheScope"]), "a listing of lro's templates is private")
			assert.JSONEq(t, `0`, string(modern["ttlMs"]), "and revalidated")
			if mode == "hints" {
				assert.Contains(t, string(modern["resourceTemplates"]), `"fake://{x}"`, "the server's template, as it listed it")
			}

			c.send(`{"jsonrpc":"2.0","id":"l","method":"resources/templates/list"}`)
			legacy := listingResult(t, c.wait(`"l"`, 10*time.Second))
			assert.Nil(t, legacy["cacheScope"], "no field of 2026-07-28 before it")
			assert.Nil(t, legacy["ttlMs"], "no field of 2026-07-28 before it")
		})
	}
}

// listingResult is the result of m, a template listing that holds lro's
// templates.
func listingResult(t *testing.T, m map[string]json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var res map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(m["result"], &res), "%s", m["error"])
	assert.Contains(t, string(res["resourceTemplates"]), `lro://files/`)
	return res
}
