package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
)

// relayedProxy returns a Proxy with what bounding what it relays reads:
// its Offloader and Config.
func relayedProxy(t *testing.T, cfg Config) *Proxy {
	lcfg := lro.DefaultConfig()
	lcfg.OutputDir = t.TempDir()
	off, err := lro.New(lcfg)
	require.NoError(t, err)
	t.Cleanup(func() { off.Close() })
	return &Proxy{off: off, cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// quoted is s as a JSON string.
func quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestBoundResultCutKeepsRoles: a prompt cut (Config.MemoryToolsOnly:
// nothing offloaded) keeps the messages before the cut whole with their
// roles and members, ends the one cut with the marker, leaves the later
// ones out, and says so in a last user message; the result's other
// members stay. A prompt within the bound comes as it came, byte for byte.
func TestBoundResultCutKeepsRoles(t *testing.T) {
	p := relayedProxy(t, Config{MemoryToolsOnly: true})
	big := strings.Repeat("words of a long prompt ", 100_000)
	result := `{"description":"d","later":{"x":1},"messages":[` +
		`{"role":"assistant","content":{"type":"text","text":"first"},"_meta":{"k":"v"}},` +
		`{"role":"user","content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":` + quoted(big) + `}]},` +
		`{"role":"assistant","content":{"type":"text","text":"left out"}}]}`
	out, err := p.boundResult(context.Background(), "prompts/get", json.RawMessage(`{"name":"p"}`), json.RawMessage(result))
	require.NoError(t, err)
	var got struct {
		Description string          `json:"description"`
		Later       json.RawMessage `json:"later"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Meta    json.RawMessage `json:"_meta"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%.300s", out)
	assert.Equal(t, "d", got.Description)
	assert.JSONEq(t, `{"x":1}`, string(got.Later))
	require.Len(t, got.Messages, 3, "%.600s", out)
	assert.Equal(t, "assistant", got.Messages[0].Role)
	assert.JSONEq(t, `{"type":"text","text":"first"}`, string(got.Messages[0].Content))
	assert.JSONEq(t, `{"k":"v"}`, string(got.Messages[0].Meta))
	assert.Equal(t, "user", got.Messages[1].Role)
	var parts []map[string]any
	require.NoError(t, json.Unmarshal(got.Messages[1].Content, &parts))
	require.Len(t, parts, 2)
	assert.Equal(t, "image", parts[0]["type"], "not judged: kept")
	assert.True(t, strings.HasSuffix(parts[1]["text"].(string), "…[cut]"))
	assert.Equal(t, "user", got.Messages[2].Role)
	assert.Contains(t, string(got.Messages[2].Content), "lro: this answer")
	bound := p.off.Config().ThresholdTokens + lro.NoticeTokens
	assert.LessOrEqual(t, p.off.EstimateTokens(out), bound+64, "the texts and their JSON")

	small := `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"x":true}`
	out, err = p.boundResult(context.Background(), "prompts/get", nil, json.RawMessage(small))
	require.NoError(t, err)
	assert.Equal(t, small, string(out))
}

// TestBoundResultInputRequests: a prompts/get or resources/read result
// that asks for input (protocol 2026-07-28) carries its elicitation cut,
// and a form too large to relay becomes the proxy's error, which names
// its size.
func TestBoundResultInputRequests(t *testing.T) {
	p := relayedProxy(t, Config{})
	big := strings.Repeat("a long question ", 100_000)
	result := `{"resultType":"input_required","requestState":"s","inputRequests":{"q":{"method":"elicitation/create","params":{"message":` + quoted(big) + `,"requestedSchema":{"type":"object"}}},"r":{"method":"roots/list"}}}`
	for _, method := range []string{"prompts/get", "resources/read"} {
		out, err := p.boundResult(context.Background(), method, nil, json.RawMessage(result))
		require.NoError(t, err)
		var got struct {
			RequestState  string `json:"requestState"`
			InputRequests map[string]struct {
				Method string `json:"method"`
				Params struct {
					Message         string          `json:"message"`
					RequestedSchema json.RawMessage `json:"requestedSchema"`
				} `json:"params"`
			} `json:"inputRequests"`
		}
		require.NoError(t, json.Unmarshal(out, &got))
		assert.Equal(t, "s", got.RequestState)
		require.Len(t, got.InputRequests, 2)
		q := got.InputRequests["q"]
		assert.Less(t, len(q.Params.Message), 20_000, method)
		assert.Contains(t, q.Params.Message, "…[cut]")
		assert.Contains(t, q.Params.Message, "lro-proxy: the server's elicitation/create request")
		assert.JSONEq(t, `{"type":"object"}`, string(q.Params.RequestedSchema))
		assert.Equal(t, "roots/list", got.InputRequests["r"].Method)
	}

	schema := `{"type":"object","properties":{"f":{"type":"string","description":` + quoted(big) + `}}}`
	result = `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"?","requestedSchema":` + schema + `}}}}`
	_, err := p.boundResult(context.Background(), "prompts/get", nil, json.RawMessage(result))
	var tooLarge *TooLargeError
	require.True(t, errors.As(err, &tooLarge), "%v", err)
	assert.Equal(t, "requestedSchema", tooLarge.Field)
	assert.Equal(t, len(schema), tooLarge.Bytes)
	assert.Contains(t, err.Error(), "elicitation/create was not relayed")
}

// TestBoundAskURL: an elicitation in URL mode whose URL does not fit is
// refused, as a form is; a sampling request whose messages are arrays of
// blocks is cut block by block, a last user message saying so, its other
// members as they came.
func TestBoundAskURL(t *testing.T) {
	p := relayedProxy(t, Config{})
	long := "https://example.com/?q=" + strings.Repeat("x", 1<<20)
	_, err := p.boundAsk(context.Background(), "elicitation/create", json.RawMessage(`{"mode":"url","message":"open it","elicitationId":"e","url":`+quoted(long)+`}`))
	var tooLarge *TooLargeError
	require.True(t, errors.As(err, &tooLarge), "%v", err)
	assert.Equal(t, "url", tooLarge.Field)

	big := strings.Repeat("sampled text ", 100_000)
	params := `{"maxTokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":` + quoted(big) + `},{"type":"text","text":"c"}]}]}`
	out, err := p.boundAsk(context.Background(), "sampling/createMessage", json.RawMessage(params))
	require.NoError(t, err)
	var got struct {
		MaxTokens int `json:"maxTokens"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%.300s", out)
	assert.Equal(t, 5, got.MaxTokens)
	require.Len(t, got.Messages, 2, "the message, and the notice: %.300s", out)
	var parts []struct {
		Text string `json:"text"`
	}
	require.NoError(t, json.Unmarshal(got.Messages[0].Content, &parts))
	require.Len(t, parts, 2, "the block after the cut left out")
	assert.Equal(t, "a", parts[0].Text)
	assert.True(t, strings.HasSuffix(parts[1].Text, "…[cut]"))
	assert.Equal(t, "user", got.Messages[1].Role)
	assert.Contains(t, string(got.Messages[1].Content), "lro-proxy: the server's sampling/createMessage request")
}
