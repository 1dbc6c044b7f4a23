package mcpgo

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro/host"
)

// fromResult views an mcp-go result in the host-neutral form.
func fromResult(r *mcp.CallToolResult) host.Result {
	res := fromFields(r.Content, r.StructuredContent, r.IsError)
	res.NeedsInput = r.NeedsInput()
	if r.Meta != nil {
		res.Meta = r.Meta
	}
	if len(r.RawStructuredContent) > 0 {
		res.Structured = r.RawStructuredContent
	}
	return res
}

// fromFields views the fields every mcp-go tool result has, a tool's or a
// task tool's, in the host-neutral form.
func fromFields(content []mcp.Content, structured any, isError bool) host.Result {
	res := host.Result{IsError: isError, Structured: structured, Content: make([]host.Content, len(content))}
	for i, c := range content {
		switch t := c.(type) {
		case mcp.TextContent:
			res.Content[i] = host.TextContent(t.Text)
		case *mcp.TextContent:
			res.Content[i] = host.TextContent(t.Text)
		case mcp.EmbeddedResource:
			res.Content[i] = embedded(t.Resource, c)
		case *mcp.EmbeddedResource:
			res.Content[i] = embedded(t.Resource, c)
		case mcp.ResourceLink:
			res.Content[i] = host.Content{Other: c, Link: linkOf(t)}
		case *mcp.ResourceLink:
			res.Content[i] = host.Content{Other: c, Link: linkOf(*t)}
		default:
			res.Content[i] = host.Content{Other: c}
		}
	}
	return res
}

// linkOf describes a handler's resource link for the bound: the text a
// client shows of it.
func linkOf(l mcp.ResourceLink) *host.ResourceLink {
	return &host.ResourceLink{URI: l.URI, Name: l.Name, Title: l.Title, Description: l.Description, MIMEType: l.MIMEType}
}

// embedded views an embedded resource: a text resource is text to judge,
// a binary one an item kept as it is.
func embedded(r mcp.ResourceContents, item mcp.Content) host.Content {
	switch t := r.(type) {
	case mcp.TextResourceContents:
		return host.Content{Text: t.Text, URI: t.URI, Other: item}
	case *mcp.TextResourceContents:
		return host.Content{Text: t.Text, URI: t.URI, Other: item}
	}
	return host.Content{Other: item}
}

// toResult builds the mcp-go result for a replaced result, with the
// original's _meta when the engine kept it.
func toResult(orig *mcp.CallToolResult, res host.Result) *mcp.CallToolResult {
	r := &mcp.CallToolResult{IsError: res.IsError, Content: toContent(res.Content), StructuredContent: res.Structured}
	if orig != nil {
		// The result type and input requests of a result that asks for
		// input, cut at the gate, go out too.
		r.Result, r.MultiRoundTripResult = orig.Result, orig.MultiRoundTripResult
	}
	r.Meta = metaOf(res)
	return r
}

// toContent builds the mcp-go content items of a replaced result.
func toContent(content []host.Content) []mcp.Content {
	out := make([]mcp.Content, len(content))
	for i, c := range content {
		if other, ok := c.Other.(mcp.Content); ok && c.Other != nil {
			out[i] = other
		} else if l := c.Link; l != nil {
			link := mcp.NewResourceLink(l.URI, l.Name, l.Description, l.MIMEType)
			link.Title = l.Title
			if size := l.Size; size > 0 {
				link.Size = &size
			}
			out[i] = link
		} else {
			out[i] = mcp.NewTextContent(c.Text)
		}
	}
	return out
}

// metaOf is the _meta of res as mcp-go sends it: the handler's, when the
// engine kept it (see host.Result.Meta), or none.
func metaOf(res host.Result) *mcp.Meta {
	m, _ := res.Meta.(*mcp.Meta)
	return m
}

// fromTaskResult views a task tool's result in the host-neutral form.
func fromTaskResult(r *mcp.CreateTaskResult) host.Result {
	res := fromFields(r.Content, r.StructuredContent, r.IsError)
	if r.Meta != nil {
		res.Meta = r.Meta
	}
	return res
}

// toTaskResult builds the task result for a replaced result, keeping the
// original's task and _meta.
func toTaskResult(orig *mcp.CreateTaskResult, res host.Result) *mcp.CreateTaskResult {
	r := &mcp.CreateTaskResult{IsError: res.IsError, Content: toContent(res.Content), StructuredContent: res.Structured}
	if orig != nil {
		r.Result, r.Task = orig.Result, orig.Task
	}
	r.Meta = metaOf(res)
	return r
}
