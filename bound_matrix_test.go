package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/gosdk"
	"github.com/mcplro/lro/internal/testmcp"
	"github.com/mcplro/lro/lrotest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bound, proved over a matrix: result shapes × delivery × faults ×
// hosts. For every cell the answer a client receives is within the
// threshold and NoticeTokens, no value is changed (a value shown is
// whole or marked cut), and the call returns.

// boundResult is what a handler returns, host-neutral.
type boundResult struct {
	texts      []string // text items
	resource   string   // an embedded text resource, when not empty
	image      bool     // an image item first
	structured json.RawMessage
	noContent  bool // content null
	isError    bool
	needsInput bool
}

// boundAnswer is what a client received.
type boundAnswer struct {
	isError    bool
	texts      []string // text items and embedded text resources
	structured []byte
}

// A boundHost serves a tool "t" whose handler returns a boundResult,
// with the Offloader's middleware, and calls it from a real client of its
// own SDK. A host is one row of this table: the proxy hosts join it.
type boundHost struct {
	name   string
	answer func(t *testing.T, o *lro.Offloader, r boundResult) boundAnswer
}

var boundHosts = []boundHost{
	{"mcp-go", mcpgoBoundAnswer},
	{"official SDK", gosdkBoundAnswer},
}

func mcpgoBoundAnswer(t *testing.T, o *lro.Offloader, r boundResult) boundAnswer {
	s := server.NewMCPServer("bound", "1", o.ServerOption())
	s.AddTool(mcpgo.NewTool("t"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res := &mcpgo.CallToolResult{IsError: r.isError, Content: []mcpgo.Content{}}
		if r.image {
			res.Content = append(res.Content, mcpgo.NewImageContent("aW1hZ2U=", "image/png"))
		}
		for _, s := range r.texts {
			res.Content = append(res.Content, mcpgo.NewTextContent(s))
		}
		if r.resource != "" {
			res.Content = append(res.Content, mcpgo.NewEmbeddedResource(mcpgo.TextResourceContents{URI: "file:///r.json", MIMEType: "application/json", Text: r.resource}))
		}
		if r.noContent {
			res.Content = nil
		}
		if r.structured != nil {
			res.StructuredContent = r.structured
		}
		if r.needsInput {
			res.ResultType = mcpgo.ResultTypeInputRequired
		}
		return res, nil
	})
	res := testmcp.CallTool(t, testmcp.Connect(t, s), "t", nil)
	a := boundAnswer{isError: res.IsError}
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcpgo.TextContent:
			a.texts = append(a.texts, c.Text)
		case mcpgo.EmbeddedResource:
			if tr, ok := c.Resource.(mcpgo.TextResourceContents); ok {
				a.texts = append(a.texts, tr.Text)
			}
		}
	}
	if res.StructuredContent != nil {
		a.structured, _ = json.Marshal(res.StructuredContent)
	}
	return a
}

func gosdkBoundAnswer(t *testing.T, o *lro.Offloader, r boundResult) boundAnswer {
	s := mcp.NewServer(&mcp.Implementation{Name: "bound", Version: "1"}, nil)
	gosdk.Install(s, o)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := &mcp.CallToolResult{IsError: r.isError, Content: []mcp.Content{}}
		if r.image {
			res.Content = append(res.Content, &mcp.ImageContent{Data: []byte("image"), MIMEType: "image/png"})
		}
		for _, s := range r.texts {
			res.Content = append(res.Content, &mcp.TextContent{Text: s})
		}
		if r.resource != "" {
			res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///r.json", MIMEType: "application/json", Text: r.resource}})
		}
		if r.noContent {
			res.Content = nil
		}
		if r.structured != nil {
			res.StructuredContent = r.structured
		}
		return res, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bound", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "t", Arguments: map[string]any{}})
	require.NoError(t, err, "the call returns")
	a := boundAnswer{isError: res.IsError}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			a.texts = append(a.texts, c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				a.texts = append(a.texts, c.Resource.Text)
			}
		}
	}
	if res.StructuredContent != nil {
		a.structured, _ = json.Marshal(res.StructuredContent)
	}
	return a
}

// boundOffloader returns an Offloader whose only tool "t" is judged
// generically, delivering in mode, over a MemFS that fault breaks.
func boundOffloader(t *testing.T, mode lro.Delivery, fault func(*lro.Config, *lrotest.MemFS)) *lro.Offloader {
	mem := lrotest.NewMemFS("/lro")
	return newOffloader(t, func(c *lro.Config) {
		c.Delivery = mode
		if fault != nil {
			fault(c, mem)
		}
	}, lro.WithFS(mem), lro.WithoutBuiltinTools(), lro.WithTool("t", lro.ToolPolicy{Generic: true}))
}

// answerTokens is what a client received, as the Offloader estimates it:
// the structured content counted once when a text is its serialization.
func answerTokens(o *lro.Offloader, a boundAnswer) int {
	tokens, repeated := 0, false
	for _, s := range a.texts {
		tokens += o.EstimateTokens([]byte(s))
		repeated = repeated || len(a.structured) > 0 && sameJSONText(s, a.structured)
	}
	if len(a.structured) > 0 && string(a.structured) != "null" && !repeated {
		tokens += o.EstimateTokens(a.structured)
	}
	return tokens
}

func sameJSONText(s string, b []byte) bool {
	var x, y any
	return json.Unmarshal([]byte(s), &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

// userMap is an object of n members "user{i}" whose values are objects of
// about size bytes.
func userMap(n, size int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"user%d":{"name":"user %d","bio":%q}`, i, i, strings.Repeat("b", max(size-40, 1)))
	}
	b.WriteByte('}')
	return b.String()
}

// scalarMap is an object of n members whose values are numbers.
func scalarMap(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	b.WriteByte('}')
	return b.String()
}

// checkMembersWhole asserts that the members an answer shows of obj,
// when it is JSON, are members of obj, whole; a text that is not JSON is
// shown marked cut, or is the library's own notice.
func checkMembersWhole(t *testing.T, obj string, a boundAnswer) (shown int) {
	t.Helper()
	var want map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(obj), &want))
	var changed []string
	for _, s := range a.texts {
		var got map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &got) != nil || got["offloaded"] != nil {
			continue
		}
		for k, v := range got {
			shown++
			if w, ok := want[k]; !ok || !sameJSONText(string(w), v) {
				changed = append(changed, k)
			}
		}
	}
	assert.Empty(t, changed, "members shown changed")
	return shown
}

// Objects in the fallback and truncate mode: a map of 10,000 users, one of
// 100,000 scalars (500,000 in the review) and one of 100 members of 2,000 bytes went out whole, or
// as "" without a mark, after a failed write, with a full quota and in
// truncate mode. They are cut member by member.
func TestObjectsCutMemberByMember(t *testing.T) {
	faults := map[string]func(*lro.Config, *lrotest.MemFS){
		"write fails":   func(_ *lro.Config, m *lrotest.MemFS) { m.FailCreate(syscall.EACCES) },
		"quota full":    func(c *lro.Config, _ *lrotest.MemFS) { c.MaxDirBytes = 100000 },
		"truncate mode": func(c *lro.Config, _ *lrotest.MemFS) { c.Delivery = lro.DeliveryTruncate },
	}
	objects := map[string]string{
		"10,000 users":         userMap(10000, 80),
		"100,000 scalars":      scalarMap(100000),
		"100 members of 2,000": userMap(100, 2000),
	}
	for _, h := range boundHosts {
		for oname, obj := range objects {
			for fname, fault := range faults {
				t.Run(h.name+"/"+oname+"/"+fname, func(t *testing.T) {
					o := boundOffloader(t, lro.DeliveryDescriptor, fault)
					a := h.answer(t, o, boundResult{texts: []string{obj}})
					size := 0
					for _, s := range a.texts {
						size += len(s)
					}
					tokens := answerTokens(o, a)
					t.Logf("%d-byte object: %d bytes, %d tokens at the client", len(obj), size, tokens)
					assert.LessOrEqual(t, tokens, o.Config().ThresholdTokens+lro.NoticeTokens)
					assert.Positive(t, checkMembersWhole(t, obj, a), "the first members are shown")
				})
			}
		}
	}
}
