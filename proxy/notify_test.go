package proxy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkCut asserts what cutNotification makes of msg at limit: a
// notification of the same method within the limit, marked as cut, or
// nil only when even its method does not fit.
func checkCut(t *testing.T, msg []byte, limit int64) map[string]any {
	t.Helper()
	out := cutNotification(msg, limit)
	var in struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(msg, &in) != nil || in.Method == "" {
		assert.Nil(t, out, "what is not a notification is not cut")
		return nil
	}
	if out == nil {
		assert.Less(t, limit, int64(len(in.Method)+300), "dropped, though the limit leaves room for its method")
		return nil
	}
	assert.LessOrEqual(t, int64(len(out)), limit, "within the limit")
	var m struct {
		JSONRPC string         `json:"jsonrpc"`
		Method  string         `json:"method"`
		Params  map[string]any `json:"params"`
	}
	require.NoError(t, json.Unmarshal(out, &m), "valid JSON: %s", out)
	assert.Equal(t, "2.0", m.JSONRPC)
	assert.Equal(t, in.Method, m.Method)
	meta, _ := m.Params["_meta"].(map[string]any)
	assert.Equal(t, map[string]any{"bytes": float64(len(msg)), "limit": float64(limit)}, meta[cutMetaKey], "marked as cut")
	return m.Params
}

// TestCutNotification: a log message of 2 MB, a progress notification
// with a 2 MB message, and other shapes, cut to 64 KiB (and to smaller
// limits): the small members stay whole, the large ones become strings
// that end with the marker.
func TestCutNotification(t *testing.T) {
	big := strings.Repeat(`worker 7 said \"done\" after a while — `, 50_000) // 2 MB, escapes and UTF-8
	for _, limit := range []int64{DefaultMaxNotificationBytes, 4 << 10, 1000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			log := checkCut(t, []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"big","data":"`+big+`"}}`), limit)
			assert.Equal(t, "info", log["level"])
			assert.Equal(t, "big", log["logger"])
			data, _ := log["data"].(string)
			assert.True(t, strings.HasPrefix(data, "worker 7 said \"done\" after a while"), "%.80s", data)
			assert.Contains(t, data, "cut by lro-proxy")
			assert.Contains(t, data, "-max-notification-bytes")

			// The data first, the level after it: the level stays.
			obj := checkCut(t, []byte(`{"params":{"data":{"rows":["`+big+`"],"n":1},"level":"error","_meta":{"trace":"t1"}},"method":"notifications/message","jsonrpc":"2.0"}`), limit)
			assert.Equal(t, "error", obj["level"])
			assert.Equal(t, "t1", obj["_meta"].(map[string]any)["trace"], "a small _meta stays")
			assert.True(t, strings.HasPrefix(obj["data"].(string), `{"rows":["worker 7`), "the head of the data's JSON: %.80s", obj["data"])

			progress := checkCut(t, []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2,"message":"`+big+`"}}`), limit)
			assert.Equal(t, "tok", progress["progressToken"])
			assert.Equal(t, float64(1), progress["progress"])
			assert.Equal(t, float64(2), progress["total"])
			assert.Contains(t, progress["message"], "cut by lro-proxy")

			// Two large members share the room; a huge _meta goes.
			two := checkCut(t, []byte(`{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"`+big+`","b":[`+strings.Repeat(`1,`, 100_000)+`1],"_meta":{"m":"`+big+`"}}}`), limit)
			assert.Contains(t, two["a"], "cut by lro-proxy")
			assert.Contains(t, two["b"], "cut by lro-proxy")
			assert.NotContains(t, two["_meta"], "m")
		})
	}
	assert.Nil(t, cutNotification([]byte(`{"method":"notifications/message","params":{"data":"`+big), 1000), "not JSON: dropped")
	assert.Nil(t, cutNotification([]byte(`{"method":"notifications/message","params":{"data":"`+big+`"}}`), 100), "no room for the marker: dropped")
}

// FuzzCutNotification: whatever the notification and the limit, the cut
// is valid JSON of the same method within the limit, or nothing.
func FuzzCutNotification(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u00e9\\n"}}`, 600)
	f.Add(`{"method":"m","params":{"data":[1,"é",{"x":"\""}],"_meta":{"a":1}}}`, 400)
	f.Add(`{"method":"m","params":[1,2,3]}`, 300)
	f.Fuzz(func(t *testing.T, msg string, limit int) {
		if limit <= 0 || len(msg) <= limit {
			return
		}
		checkCut(t, []byte(msg), int64(limit))
	})
}
