package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/proxy"
)

// asked is a client that answers sampling and elicitation, noting the
// texts of each request it gets.
type asked struct {
	mu           sync.Mutex
	samplings    []string
	elicitations []string
}

func (a *asked) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	texts := []string{req.SystemPrompt}
	for _, m := range req.Messages {
		texts = append(texts, blockTexts(m.Content)...)
	}
	a.mu.Lock()
	a.samplings = append(a.samplings, strings.Join(texts, "\n"))
	a.mu.Unlock()
	return &mcp.CreateMessageResult{Model: "m", SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("sampled")}}, nil
}

func (a *asked) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	schema, _ := json.Marshal(req.Params.RequestedSchema)
	a.mu.Lock()
	a.elicitations = append(a.elicitations, req.Params.Message+"\n"+string(schema))
	a.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"ok": true}}}, nil
}

func (a *asked) seen() (samplings, elicitations []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.samplings...), append([]string(nil), a.elicitations...)
}

// blockTexts returns the texts a client shows of a content block (or of
// several), whatever mcp-go decoded it to: text and embedded text
// resources.
func blockTexts(content any) []string {
	b, _ := json.Marshal(content)
	var blocks []struct {
		Text     string `json:"text"`
		Resource struct {
			Text string `json:"text"`
		} `json:"resource"`
	}
	if json.Unmarshal(b, &blocks) != nil {
		blocks = blocks[:0]
		var one struct {
			Text     string `json:"text"`
			Resource struct {
				Text string `json:"text"`
			} `json:"resource"`
		}
		_ = json.Unmarshal(b, &one)
		blocks = append(blocks, one)
	}
	var texts []string
	for _, bl := range blocks {
		texts = append(texts, bl.Text, bl.Resource.Text)
	}
	return texts
}

// relayedPaths start a proxy of proxy.RelayedServer on each path: the
// local server (lro-proxy -- COMMAND), and a remote through Serve (the
// raw relay) and through Server (an in-process client: the typed path).
// Each returns a client with a as its sampling and elicitation handlers.
var relayedPaths = map[string]func(t *testing.T, a *asked) (*client.Client, *lro.Offloader){
	"local": func(t *testing.T, a *asked) (*client.Client, *lro.Offloader) {
		t.Setenv("LRO_PROXY_FAKE_SERVER", "relayed")
		off := newOffloader(t, nil)
		p, err := proxy.New(off, proxy.Config{Command: []string{os.Args[0]}, Stderr: io.Discard, CallTimeout: time.Minute, Extract: true})
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		return serveClient(t, p, a), off
	},
	"remote": func(t *testing.T, a *asked) (*client.Client, *lro.Offloader) {
		p, off := relayedProxy(t)
		return serveClient(t, p, a), off
	},
	"remote in process": func(t *testing.T, a *asked) (*client.Client, *lro.Offloader) {
		p, off := relayedProxy(t)
		return connect(t, p.Server(), client.WithProtocolVersion(mcp.ProtocolVersion20251125), client.WithSamplingHandler(a), client.WithElicitationHandler(a)), off
	},
}

// relayedProxy is a proxy of proxy.RelayedServer as a remote, with a
// call's timeout of a minute (the race detector on a loaded machine took
// a call of 2 MB past the 20 s of startProxy).
func relayedProxy(t *testing.T) (*proxy.Proxy, *lro.Offloader) {
	off := newOffloader(t, nil)
	p, err := proxy.New(off, proxy.Config{Remote: relayedRemote(t), ProtocolVersion: mcp.ProtocolVersion20251125, Extract: true, CallTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p, off
}

// relayedRemote serves proxy.RelayedServer over streamable HTTP.
func relayedRemote(t *testing.T) string {
	h := httptest.NewServer(server.NewStreamableHTTPServer(proxy.RelayedServer()))
	t.Cleanup(h.Close)
	return h.URL
}

// serveClient returns an mcp-go client of p.Serve, over pipes, with a as
// its sampling and elicitation handlers.
func serveClient(t *testing.T, p *proxy.Proxy, a *asked) *client.Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = p.Serve(ctx, inR, outW)
		outW.Close()
	}()
	c := client.NewClient(transport.NewIO(outR, inW, nil), client.WithProtocolVersion(mcp.ProtocolVersion20251125), client.WithSamplingHandler(a), client.WithElicitationHandler(a))
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() {
		c.Close()
		inW.Close()
		cancel()
		<-served
	})
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "lro-test", Version: "1"}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	_, err := c.Initialize(ctx, init)
	require.NoError(t, err)
	return c
}

// TestProxyBoundsWhatItRelays: what the proxy relays besides tool
// answers that reaches a model (issue 41, item 3), 2 MB from the server
// each way, reaches the client within Config.ThresholdTokens +
// lro.NoticeTokens on every path: a prompt and a resource of the server
// offloaded (the whole text in the file), a sampling request and an
// elicitation's message cut with the marker, a prompt's error cut at
// MaxErrorBytes, an elicitation whose form
// is too large refused with an error that names its size, and a result
// asking for input carries no request over the bound. Before, each came
// whole (2 MB).
func TestProxyBoundsWhatItRelays(t *testing.T) {
	for name, start := range relayedPaths {
		t.Run(name, func(t *testing.T) {
			a := &asked{}
			c, off := start(t, a)
			bound := off.Config().ThresholdTokens + lro.NoticeTokens
			within := func(t *testing.T, what string, texts ...string) {
				t.Helper()
				all := strings.Join(texts, "\n")
				tokens := off.EstimateTokens([]byte(all))
				assert.LessOrEqual(t, tokens, bound, "%s: %d bytes reached the client", what, len(all))
			}
			ctx := context.Background()

			t.Run("prompts/get", func(t *testing.T) {
				res, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "big"}})
				require.NoError(t, err)
				texts := []string{res.Description}
				for _, m := range res.Messages {
					texts = append(texts, blockTexts(m.Content)...)
				}
				within(t, "prompts/get", texts...)
				d := relayedDescriptor(t, texts)
				assert.GreaterOrEqual(t, len(readFile(t, d.FilePath)), proxy.RelayedBigBytes, "the offloaded file holds the prompt whole")
				assert.Contains(t, d.Summary.Operation, "prompt_big")

				small, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "small"}})
				require.NoError(t, err)
				assert.Equal(t, "a small prompt", small.Description)
				require.Len(t, small.Messages, 1)
				assert.Equal(t, "hello", small.Messages[0].Content.(mcp.TextContent).Text)
			})

			t.Run("prompts/get error", func(t *testing.T) {
				_, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "failing"}})
				require.Error(t, err)
				assert.LessOrEqual(t, len(err.Error()), int(proxy.DefaultMaxErrorBytes)+200, "the error cut at MaxErrorBytes")
				assert.True(t, strings.Contains(err.Error(), "line 000000: words"), "%.200s", err)
			})

			t.Run("resources/read", func(t *testing.T) {
				res, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "big://doc"}})
				require.NoError(t, err)
				var texts []string
				for _, rc := range res.Contents {
					if tr, ok := rc.(mcp.TextResourceContents); ok {
						texts = append(texts, tr.Text)
						assert.Equal(t, "big://doc", tr.URI)
					}
				}
				within(t, "resources/read", texts...)
				d := relayedDescriptor(t, texts)
				assert.GreaterOrEqual(t, len(readFile(t, d.FilePath)), proxy.RelayedBigBytes, "the offloaded file holds the resource whole")
			})

			t.Run("sampling", func(t *testing.T) {
				res := callTool(t, c, "sample", nil)
				require.False(t, res.IsError, textOf(t, res, 0))
				assert.Equal(t, "answered sampled", textOf(t, res, 0))
				samplings, _ := a.seen()
				require.Len(t, samplings, 1)
				within(t, "sampling/createMessage", samplings[0])
				assert.True(t, strings.Contains(samplings[0], "…[cut]"), "the cut marked")
				assert.True(t, strings.Contains(samplings[0], "lro-proxy: the server's sampling/createMessage request"), "the cut told")
			})

			t.Run("elicitation", func(t *testing.T) {
				_, before := a.seen()
				res := callTool(t, c, "elicit", nil)
				require.False(t, res.IsError, textOf(t, res, 0))
				assert.Equal(t, "answered accept", textOf(t, res, 0))
				_, after := a.seen()
				require.Len(t, after, len(before)+1)
				got := after[len(before)]
				within(t, "elicitation/create", got)
				assert.True(t, strings.Contains(got, "…[cut]"), "the cut marked")
				assert.True(t, strings.HasSuffix(got, `{"properties":{"ok":{"type":"boolean"}},"type":"object"}`), "the form whole")
			})

			t.Run("elicitation schema", func(t *testing.T) {
				_, before := a.seen()
				res := callTool(t, c, "elicit_schema", nil)
				require.True(t, res.IsError, textOf(t, res, 0))
				within(t, "the tool's answer", textOf(t, res, 0))
				assert.Regexp(t, `requestedSchema is \d+ bytes \(about \d+ tokens\), over the proxy's threshold of \d+ tokens`, proxyClipped(textOf(t, res, 0)))
				_, after := a.seen()
				assert.Len(t, after, len(before), "the client was not asked")
			})

			t.Run("input", func(t *testing.T) {
				_, before := a.seen()
				res := callTool(t, c, "input", nil)
				var texts []string
				for _, item := range res.Content {
					texts = append(texts, blockTexts(item)...)
				}
				within(t, "the tool's answer", texts...)
				_, after := a.seen()
				for _, e := range after[len(before):] {
					within(t, "an input request", e)
				}
			})
		})
	}
}

// proxyClipped returns the first 1,000 bytes of s, for a message.
func proxyClipped(s string) string { return s[:min(len(s), 1000)] }

// relayedDescriptor returns the descriptor among texts.
func relayedDescriptor(t *testing.T, texts []string) lro.OffloadResponse {
	t.Helper()
	for _, text := range texts {
		var d lro.OffloadResponse
		if json.Unmarshal([]byte(text), &d) == nil && d.Offloaded {
			return d
		}
	}
	t.Fatalf("no descriptor among %d texts: %.300q", len(texts), texts)
	return lro.OffloadResponse{}
}
