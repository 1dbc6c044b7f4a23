// Package gosdktest calls the tools of an official-SDK server wired with
// lro from a test, through the SDK's in-memory transports, and returns
// each reply with its descriptor decoded:
//
//	c := gosdktest.Connect(t, s)
//	r := c.Call(t, "list_memories", map[string]any{"limit": 500})
//	if r.Descriptor == nil { ... inline: r.Text ... }
//	f, err := lrotest.ReadOffloaded(mem, r.Descriptor.FilePath)
//
// It is a package of its own, beside [github.com/mcplro/lro/lrotest], so
// that the tests of a server on the official SDK compile no mcp-go (and
// those of an mcp-go server no official SDK): each SDK's helper is in its
// own package, as each SDK's adapter is.
package gosdktest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client is a client session of a server in the same process.
type Client struct {
	// S is the SDK's client session, for what Call does not do.
	S *mcp.ClientSession
}

// Connect connects a client to s through in-memory transports; both ends
// are closed when the test ends. A failure ends the test.
func Connect(t testing.TB, s *mcp.Server) *Client {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("gosdktest: connecting the server: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "gosdktest", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		t.Fatalf("gosdktest: connecting the client: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return &Client{S: cs}
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
	res, err := c.S.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("gosdktest: calling %s: %v", name, err)
	}
	r := Reply{Result: res, IsError: res.IsError}
	var texts []string
	for _, item := range res.Content {
		if tc, ok := item.(*mcp.TextContent); ok {
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
