// Package mcpgotest calls the tools of an mcp-go server wired with lro
// from a test, through mcp-go's in-process client, and returns each reply
// with its descriptor decoded:
//
//	c := mcpgotest.Connect(t, s)
//	r := c.Call(t, "list_memories", map[string]any{"limit": 500})
//	if r.Descriptor == nil { ... inline: r.Text ... }
//	f, err := lrotest.ReadOffloaded(mem, r.Descriptor.FilePath)
//
// It is a package of its own, beside [github.com/mcplro/lro/lrotest], so
// that the tests of a server on the official SDK compile no mcp-go (and
// those of an mcp-go server no official SDK): each SDK's helper is in its
// own package, as each SDK's adapter is.
package mcpgotest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
)

// Client is an initialized in-process client of an mcp-go server.
type Client struct {
	// C is mcp-go's client, for what Call does not do.
	C *client.Client
}

// Connect starts an in-process client of s and initializes it; it is
// closed when the test ends. A failure ends the test.
func Connect(t testing.TB, s *server.MCPServer) *Client {
	t.Helper()
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatalf("mcpgotest: %v", err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("mcpgotest: starting the client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "mcpgotest", Version: "1"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		t.Fatalf("mcpgotest: initialize: %v", err)
	}
	return &Client{C: c}
}

// Reply is what a tool call answered.
type Reply struct {
	Result *mcp.CallToolResult
	// Text is the text of the result's text items, joined by newlines:
	// the records inline, or the descriptor's JSON.
	Text    string
	IsError bool
	// Descriptor is the descriptor the result holds when it was
	// offloaded, nil when the result is inline.
	Descriptor *lro.OffloadResponse
}

// Call calls the tool name with args and returns its reply; a tool
// error is a reply (IsError), a protocol error ends the test.
func (c *Client) Call(t testing.TB, name string, args map[string]any) Reply {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.C.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("mcpgotest: calling %s: %v", name, err)
	}
	r := Reply{Result: res, IsError: res.IsError}
	var texts []string
	for _, item := range res.Content {
		if tc, ok := item.(mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	r.Text = strings.Join(texts, "\n")
	if len(texts) > 0 {
		r.Descriptor = descriptor(texts[0])
	}
	return r
}

// descriptor decodes text when it is an LRO descriptor.
func descriptor(text string) *lro.OffloadResponse {
	var d lro.OffloadResponse
	if json.Unmarshal([]byte(text), &d) != nil || !d.Offloaded {
		return nil
	}
	return &d
}
