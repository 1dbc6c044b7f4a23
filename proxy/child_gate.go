package proxy

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro/host"
)

// The exit gate of the answers of a local server that the proxy cannot
// read as a tool result: a JSON-RPC error, or a result that
// decodeRemoteMessage does not take (content missing or null, an item of
// an unknown type or of none, a request for input). Such an answer used
// to go to the client as it came, whatever its size (a 20 MB one at
// 20.4 MB): now it is handed to the library's gate as what the client
// would read of it, and goes as it came only when the gate leaves it
// unchanged; otherwise the client gets what the gate made of it, which
// is within the threshold plus the gate's fixed notice.

// gateUnread returns the message that answers the client's tools/call id
// of tool with answer, the server's answer that the proxy cannot read as
// a tool result; or the client's tasks/result id, the result of a tool
// run as a task (tool is then the method), which the proxy hands to the
// gate as it hands those.
func (r *relay) gateUnread(ctx context.Context, id json.RawMessage, tool string, answer []byte) []byte {
	var m struct {
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(answer, &m) != nil {
		// The relay read its id and saw no method: JSON it cannot decode
		// whole. What the client would read is its text.
		m.Result = answer
	}
	if e := m.Error; e != nil {
		in := host.Result{IsError: true, Content: []host.Content{host.TextContent(e.Message)}}
		if len(e.Data) > 0 && string(e.Data) != "null" {
			in.Content = append(in.Content, host.TextContent(string(e.Data)))
		}
		out := r.p.off.Host().Bound(ctx, tool, in)
		if sameResult(in, out) {
			return answer
		}
		// A bounded error: the server's code, and the gate's text of its
		// message (and data) as the message.
		return errorMessage(id, e.Code, textOf(out), 0)
	}
	var kind struct {
		ResultType mcp.ResultType `json:"resultType"`
	}
	_ = json.Unmarshal(m.Result, &kind)
	in := host.Result{Content: []host.Content{host.TextContent(string(m.Result))}, NeedsInput: kind.ResultType == mcp.ResultTypeInputRequired}
	out := r.p.off.Host().Bound(ctx, tool, in)
	if sameResult(in, out) {
		return answer
	}
	// A request for input that is cut cannot be answered: the model is
	// told, by a tool error, rather than handed a part of it as a result.
	out.IsError = out.IsError || in.NeedsInput
	b, err := toolAnswer(id, toolResult(out))
	if err != nil {
		return nil
	}
	return b
}

// sameResult reports whether out, what the gate made of in, is in
// unchanged.
func sameResult(in, out host.Result) bool {
	if in.IsError != out.IsError || in.NeedsInput != out.NeedsInput || len(in.Content) != len(out.Content) || out.Structured != nil {
		return false
	}
	for i, c := range in.Content {
		o := out.Content[i]
		if o.Text != c.Text || o.Link != nil || o.Other != nil || o.URI != c.URI {
			return false
		}
	}
	return true
}

// textOf joins the text of res's items.
func textOf(res host.Result) string {
	var b strings.Builder
	for i, c := range res.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// toolResult is the mcp-go result of res, a result the gate made.
func toolResult(res host.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError, StructuredContent: res.Structured}
	for _, c := range res.Content {
		switch other, ok := c.Other.(mcp.Content); {
		case ok:
			out.Content = append(out.Content, other)
		case c.Link != nil:
			link := mcp.NewResourceLink(c.Link.URI, c.Link.Name, c.Link.Description, c.Link.MIMEType)
			size := c.Link.Size
			link.Size = &size
			out.Content = append(out.Content, link)
		default:
			out.Content = append(out.Content, mcp.NewTextContent(c.Text))
		}
	}
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	return out
}
