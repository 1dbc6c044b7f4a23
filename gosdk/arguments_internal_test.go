package gosdk

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcplro/lro/internal/adapt"
)

// TestArguments checks arguments against what decoding the whole
// arguments into a map, as the middleware did, gives for the members the
// engine reads.
func TestArguments(t *testing.T) {
	for _, raw := range []string{
		``, `null`, `[]`, `"detail"`, `{}`, `{"a":1,}`, `{"detail":"full"`,
		`{"query":"q","detail":"full"}`,
		`{"limit":5,"page_size":"7","maxResults":1e3,"nested":{"detail":"light","query":"no"},"detail":"medium"}`,
		`{"detail":"light","detail":"full"}`,   // the last wins
		`{"det\u0061il":"full","qu\"ery":"x"}`, // escaped keys
		`{"Detail":"full","QUERY":"q"}`,        // keys match exactly
		`{"detail":null,"query":7}`,
		`{"detail":["full"],"query":{"q":"\u00e9\ud800"}}`,
		` { "query" : "a \"quoted\" query" , "detail" : "light" } `,
	} {
		var want map[string]any
		if raw != "" {
			var all map[string]any
			if json.Unmarshal([]byte(raw), &all) == nil {
				for k, v := range all {
					if adapt.Reads([]byte(k)) {
						if want == nil {
							want = map[string]any{}
						}
						want[k] = v
					}
				}
			}
		}
		assert.Equal(t, want, arguments(json.RawMessage(raw)), "%s", raw)
	}
}
