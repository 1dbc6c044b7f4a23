package proxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// RelayedBigBytes is the size of what RelayedServer sends the client
// besides tool answers.
const RelayedBigBytes = 2 << 20

// RelayedText returns about n bytes of lines of text.
func RelayedText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d: words of a long text that a model would read whole if it came whole\n", i)
	}
	return b.String()
}

// RelayedServer is the server of the tests of what the proxy relays
// besides tool answers (issue 41, item 3), served as the local server
// (fakeServer's mode "relayed") and as a remote. It sends the client
// 2 MB, RelayedBigBytes, each way it can:
//
//   - prompts/get of "big": a short assistant message, then a user
//     message of 1 MB of text and one with a text resource of 1 MB; of
//     "small": one short message; of "failing", an error of 2 MB;
//   - resources/read of big://doc: 2 MB of text;
//   - tools/call of "sample" asks the client to sample with a
//     systemPrompt of 1 MB and a message of 1 MB; of "elicit", to elicit
//     with a message of 2 MB; of "elicit_schema", with a requestedSchema
//     of 256 KB (refused whatever its size over the bound: a map of 2 MB
//     of properties took mcp-go and the race detector past the call's
//     timeout on a loaded machine; its answer is the error, when it gets
//     one); each answers
//     "answered " and the client's answer's first 40 bytes;
//   - tools/call of "input" answers, the first time, with a result that
//     asks for input: a text of 1 MB and an elicitation/create of 2 MB;
//     once answered, with "answered".
func RelayedServer() *server.MCPServer {
	half, big := RelayedText(RelayedBigBytes/2), RelayedText(RelayedBigBytes)
	s := server.NewMCPServer("relayed", "1.0.0", server.WithElicitation(), server.WithPromptCapabilities(false), server.WithResourceCapabilities(false, false))
	s.AddPrompt(mcp.NewPrompt("big"), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("a big prompt", []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleAssistant, mcp.NewTextContent("a short first message")),
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(half)),
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "big://doc", MIMEType: "text/plain", Text: half})),
		}), nil
	})
	s.AddPrompt(mcp.NewPrompt("small"), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("a small prompt", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("hello"))}), nil
	})
	s.AddPrompt(mcp.NewPrompt("failing"), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, errors.New(big)
	})
	s.AddResource(mcp.NewResource("big://doc", "doc", mcp.WithMIMEType("text/plain")), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: "big://doc", MIMEType: "text/plain", Text: big}}, nil
	})
	answered := func(text string) *mcp.CallToolResult {
		return mcp.NewToolResultText("answered " + text[:min(len(text), 40)])
	}
	s.AddTool(mcp.NewTool("sample"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		req := mcp.CreateMessageRequest{}
		req.SystemPrompt = half
		req.Messages = []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(half)}}
		req.MaxTokens = 10
		res, err := s.RequestSampling(ctx, req)
		if err != nil {
			return mcp.NewToolResultError("sampling: " + err.Error()), nil
		}
		text, _ := res.Content.(mcp.TextContent)
		return answered(text.Text), nil
	})
	elicit := func(ctx context.Context, message string, schema any) *mcp.CallToolResult {
		res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{Message: message, RequestedSchema: schema}})
		if err != nil {
			return mcp.NewToolResultError("elicitation: " + err.Error())
		}
		return answered(string(res.Action))
	}
	form := map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}
	s.AddTool(mcp.NewTool("elicit"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return elicit(ctx, big, form), nil
	})
	s.AddTool(mcp.NewTool("elicit_schema"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		props := map[string]any{}
		for i := 0; len(props)*60 < RelayedBigBytes/8; i++ {
			props[fmt.Sprintf("field_%06d", i)] = map[string]any{"type": "string", "description": "a field of a form too large"}
		}
		return elicit(ctx, "fill this in", map[string]any{"type": "object", "properties": props}), nil
	})
	s.AddTool(mcp.NewTool("input"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) > 0 {
			return mcp.NewToolResultText("answered"), nil
		}
		res := mcp.NewToolResultText(half)
		res.ResultType = mcp.ResultTypeInputRequired
		res.InputRequests = mcp.InputRequests{"q": mcp.NewElicitationInputRequest(mcp.ElicitationParams{Message: big, RequestedSchema: form})}
		res.RequestState = "s"
		return res, nil
	})
	return s
}

// relayedServer serves RelayedServer on stdio.
func relayedServer() {
	_ = server.NewStdioServer(RelayedServer()).Listen(context.Background(), os.Stdin, os.Stdout)
}
