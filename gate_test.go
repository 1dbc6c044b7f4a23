package lro_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/testmcp"
	"github.com/mcplro/lro/mcpgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tool error of a tool with a policy, over the threshold, went to the
// client whole: it is cut at the gate, still an error, its text a prefix
// of the handler's marked cut.
func TestGateCutsAToolErrorOverTheThreshold(t *testing.T) {
	o := newOffloader(t, nil, lro.WithTool("fails", lro.ToolPolicy{Generic: true}))
	msg := "error: " + strings.Repeat("stack frame at /srv/app/handler.go:42\n", 5000) // 190 KB
	s := server.NewMCPServer("gate", "1", mcpgo.ServerOption(o))
	s.AddTool(mcp.NewTool("fails"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError(msg), nil
	})
	res := testmcp.CallTool(t, testmcp.Connect(t, s), "fails", nil)
	require.True(t, res.IsError)
	require.Len(t, res.Content, 2)
	shown := testmcp.TextOf(t, res, 0)
	require.True(t, strings.HasSuffix(shown, " …[cut]"), "the cut is marked")
	assert.True(t, strings.HasPrefix(msg, strings.TrimSuffix(shown, " …[cut]")), "what is shown is the error's beginning, unchanged")
	assert.Contains(t, testmcp.TextOf(t, res, 1), "is cut")
	assertBound(t, o, boundAnswer{isError: true, texts: []string{shown, testmcp.TextOf(t, res, 1)}}, fmt.Sprintf("a %d-byte error", len(msg)))
}

// Bound cuts what a host relays without Serve: structured content alone
// over the threshold is left out, its JSON cut as text, and the answer is
// a tool error; a small answer and a disabled Offloader pass as they are.
func TestBoundCutsStructuredContentAlone(t *testing.T) {
	o := newOffloader(t, nil)
	big := []byte(`{"rows":[` + strings.Repeat(`{"id":1,"name":"row"},`, 3000) + `{"id":2}]}`)
	out := o.Host().Bound(ctx, "relayed", host.Result{Structured: big})
	assert.True(t, out.IsError)
	assert.Nil(t, out.Structured)
	require.Len(t, out.Content, 2)
	assert.True(t, strings.HasPrefix(string(big), strings.TrimSuffix(out.Content[0].Text, " …[cut]")))
	assert.Contains(t, out.Content[1].Text, "structured content left out")
	assertBound(t, o, boundAnswer{texts: []string{out.Content[0].Text, out.Content[1].Text}}, "structured content alone")

	// Repeated by a text, it counts once, and is left out all the same.
	out = o.Host().Bound(ctx, "relayed", host.Result{Content: []host.Content{host.TextContent(string(big))}, Structured: big})
	assert.True(t, out.IsError, "a result without its structured content is a tool error")
	assert.Nil(t, out.Structured)
	require.Len(t, out.Content, 2)
	assert.Contains(t, out.Content[1].Text, "structured content left out")

	small := host.Result{Content: []host.Content{host.TextContent("ok")}}
	assert.Equal(t, small, o.Host().Bound(ctx, "relayed", small))

	off := newOffloader(t, func(c *lro.Config) { c.Enabled = lro.Bool(false) })
	assert.Equal(t, host.Result{Structured: big}, off.Host().Bound(ctx, "relayed", host.Result{Structured: big}))
}

// The gate's notice and marker fit NoticeTokens whatever the numbers.
func TestGateNoticeFitsNoticeTokens(t *testing.T) {
	o := newOffloader(t, func(c *lro.Config) { c.ThresholdTokens = 1 })
	items := []host.Content{host.TextContent(strings.Repeat("x", 100)), {Link: &host.ResourceLink{URI: "lro://files/a"}}, host.TextContent("y")}
	out := o.Host().Bound(ctx, "relayed", host.Result{Content: items, Structured: []byte(`{"a":"` + strings.Repeat("z", 100) + `"}`)})
	var a boundAnswer
	for _, c := range out.Content {
		a.texts = append(a.texts, c.Text)
	}
	assertBound(t, o, a, "items under a threshold of 1")
}
