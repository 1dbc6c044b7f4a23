package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
)

// TestShedMeta: a result's _meta that alone is over the Offloader's bound
// is taken out of the message in place (its length kept, still valid
// JSON, the result's other members as they were); a smaller one, or one
// that is not valid JSON, stays for the gate to judge.
func TestShedMeta(t *testing.T) {
	off, err := lro.New(lro.DefaultConfig(), lro.WithoutJanitor())
	require.NoError(t, err)
	defer off.Close()
	p := &Proxy{off: off}
	big := `{"example.com/trace":"` + strings.Repeat("span 7 took a while; ", 20_000) + `"}`
	msg := func(meta string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}],"_meta"  :  ` + meta + `,"isError":false}}`)
	}

	m := msg(big)
	n := len(m)
	tokens := p.shedMeta(m)
	assert.Greater(t, tokens, off.Config().ThresholdTokens, "shed, with its estimate")
	assert.Len(t, m, n, "in place")
	var got struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal(m, &got), "still JSON")
	assert.NotContains(t, got.Result, "_meta")
	assert.JSONEq(t, `[{"type":"text","text":"ok"}]`, string(got.Result["content"]))
	assert.Equal(t, "false", string(got.Result["isError"]))

	_, res, ok := decodeRemoteMessage(m)
	require.True(t, ok)
	assert.Nil(t, res.Meta)
	p.metaNote(res, tokens)
	assert.Len(t, res.Content, 2, "the note after the content")

	small := msg(`{"example.com/trace":"` + strings.Repeat("x", 100) + `"}`)
	assert.Zero(t, p.shedMeta(small), "a small _meta is the gate's")
	assert.Contains(t, string(small), "example.com/trace")
	broken := msg(big[:len(big)-1] + `,}`)
	assert.Zero(t, p.shedMeta(broken), "a _meta that is not JSON stays, for the decoder to refuse")
}
