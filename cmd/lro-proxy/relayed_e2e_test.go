package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro"
)

// relayedServerEnv makes the test binary relayedServer.
const relayedServerEnv = "LRO_PROXY_RELAYED_SERVER"

// relayedBytes is what relayedServer sends each way besides tool answers.
const relayedBytes = 2 << 20

// relayedText is about n bytes of lines of text.
func relayedText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d: words of a long text that a model would read whole if it came whole\n", i)
	}
	return b.String()
}

// relayedServer serves on stdio a prompt "big" and a resource big://doc
// of 2 MB each, and a tool "elicit" that asks the client to elicit with
// a message of 2 MB.
func relayedServer() {
	big := relayedText(relayedBytes)
	s := server.NewMCPServer("relayed", "1.0.0", server.WithElicitation())
	s.AddPrompt(mcpgo.NewPrompt("big"), func(context.Context, mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
		return mcpgo.NewGetPromptResult("a big prompt", []mcpgo.PromptMessage{mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent(big))}), nil
	})
	s.AddResource(mcpgo.NewResource("big://doc", "doc"), func(context.Context, mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
		return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: "big://doc", MIMEType: "text/plain", Text: big}}, nil
	})
	s.AddTool(mcpgo.NewTool("elicit"), func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res, err := s.RequestElicitation(ctx, mcpgo.ElicitationRequest{Params: mcpgo.ElicitationParams{Message: big, RequestedSchema: map[string]any{"type": "object"}}})
		if err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		return mcpgo.NewToolResultText("answered " + string(res.Action)), nil
	})
	_ = server.ServeStdio(s)
}

// elicited is a client's elicitation handler that keeps the messages.
type elicited struct {
	mu       sync.Mutex
	messages []string
}

func (e *elicited) Elicit(_ context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	e.mu.Lock()
	e.messages = append(e.messages, req.Params.Message)
	e.mu.Unlock()
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionAccept}}, nil
}

// TestStdioRelayedIsBounded: through the lro-proxy binary in front of a
// local server, a prompt and a resource of 2 MB reach an mcp-go client
// as descriptors of the files that hold them whole, and an elicitation's
// message of 2 MB cut within the bound (issue 41, item 3: 2 MB each,
// before).
func TestStdioRelayedIsBounded(t *testing.T) {
	cfg := lro.DefaultConfig()
	cfg.OutputDir = t.TempDir() // the estimator's only: nothing is written
	off, err := lro.New(cfg)
	require.NoError(t, err)
	defer off.Close()
	bound := off.Config().ThresholdTokens + lro.NoticeTokens
	e := &elicited{}
	env := []string{relayedServerEnv + "=1", "ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=" + t.TempDir()}
	c := mcpclient.NewClient(transport.NewStdio(proxyBin, env, "--", os.Args[0]), mcpclient.WithElicitationHandler(e))
	ctx := context.Background()
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { c.Close() })
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "t", Version: "1"}
	init.Params.ProtocolVersion = mcpgo.ProtocolVersion20251125
	_, err = c.Initialize(ctx, init)
	require.NoError(t, err)

	descriptor := func(what, text string) {
		t.Helper()
		assert.LessOrEqual(t, off.EstimateTokens([]byte(text)), bound, "%s: %d bytes", what, len(text))
		var d lro.OffloadResponse
		require.NoError(t, json.Unmarshal([]byte(text), &d), "%s: %.200s", what, text)
		require.True(t, d.Offloaded, what)
		info, err := os.Stat(d.FilePath)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, info.Size(), int64(relayedBytes), "%s: the file holds it whole", what)
	}
	prompt, err := c.GetPrompt(ctx, mcpgo.GetPromptRequest{Params: mcpgo.GetPromptParams{Name: "big"}})
	require.NoError(t, err)
	require.NotEmpty(t, prompt.Messages)
	text, _ := prompt.Messages[0].Content.(mcpgo.TextContent)
	descriptor("prompts/get", text.Text)

	read, err := c.ReadResource(ctx, mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: "big://doc"}})
	require.NoError(t, err)
	require.NotEmpty(t, read.Contents)
	rc, _ := read.Contents[0].(mcpgo.TextResourceContents)
	descriptor("resources/read", rc.Text)

	req := mcpgo.CallToolRequest{}
	req.Params.Name = "elicit"
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Equal(t, "answered accept", res.Content[0].(mcpgo.TextContent).Text)
	e.mu.Lock()
	defer e.mu.Unlock()
	require.Len(t, e.messages, 1)
	assert.LessOrEqual(t, off.EstimateTokens([]byte(e.messages[0])), bound, "elicitation/create: %d bytes", len(e.messages[0]))
	assert.True(t, strings.Contains(e.messages[0], "…[cut]"), "the cut marked")
}
