package lro

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Middleware returns mcp-go tool middleware that offloads large results of
// the tools with a policy (see [WithTool]; the specification's
// recall_memories, inject_context, list_memories and search tools have one
// built in). Add it with server.WithToolHandlerMiddleware or
// (*server.MCPServer).Use, or use [Offloader.ServerOption].
//
// Results pass through untouched when they are errors, ask for more input,
// come from a tool without a policy or with an output schema (unless the
// policy allows it), or when offloading is disabled. A result that is
// offloaded has its text and structured content replaced by the
// descriptor. An invalid detail argument is returned as a tool error.
func (o *Offloader) Middleware() server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return o.serveMCPGo(ctx, req, next, nil)
		}
	}
}

// ServerOption returns a server.ServerOption that adds
// [Offloader.Middleware] and the hooks of [Offloader.AddHooks]:
//
//	s := server.NewMCPServer("memory", "1.0.0", off.ServerOption())
//
// Give it after server.WithHooks, which would replace the hooks it adds.
func (o *Offloader) ServerOption() server.ServerOption {
	mw := server.WithToolHandlerMiddleware(o.Middleware())
	return func(s *server.MCPServer) {
		mw(s)
		h := s.GetHooks()
		if h == nil {
			h = &server.Hooks{}
			server.WithHooks(h)(s)
		}
		o.AddHooks(h)
	}
}

// Wrap returns handler with offloading under policy, whatever the
// Offloader's configured tools: for servers that wrap handlers one by one.
func (o *Offloader) Wrap(policy ToolPolicy, handler server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return o.serveMCPGo(ctx, req, handler, &policy)
	}
}

// serveMCPGo translates an mcp-go call to [Offloader.Serve] and back.
func (o *Offloader) serveMCPGo(ctx context.Context, req mcp.CallToolRequest, next server.ToolHandlerFunc, policy *ToolPolicy) (*mcp.CallToolResult, error) {
	call := Call{
		Tool:      req.Params.Name,
		Arguments: req.GetArguments(),
		FromProxy: o.IsProxyClient(ctx, req),
	}
	if srv := server.ServerFromContext(ctx); srv != nil {
		if st := srv.GetTool(call.Tool); st != nil {
			call.OutputSchema = st.Tool.OutputSchema.Type != "" || len(st.Tool.RawOutputSchema) > 0
		}
		call.NativeExtract = srv.GetTool(ExtractToolName) != nil
	} else {
		call.NativeExtract = o.native.Load()
	}
	var orig *mcp.CallToolResult
	run := func(ctx context.Context) (Result, error) {
		var err error
		orig, err = next(ctx, req)
		if err != nil || orig == nil {
			return Result{}, err
		}
		return fromMCPGo(orig), nil
	}
	var (
		res      Result
		replaced bool
		err      error
	)
	if policy != nil {
		res, replaced, err = o.serveWith(ctx, call, *policy, run)
	} else {
		res, replaced, err = o.Serve(ctx, call, run)
	}
	if !replaced || err != nil {
		return orig, err
	}
	return toMCPGo(orig, res), nil
}

// fromMCPGo views an mcp-go result in the host-neutral form.
func fromMCPGo(r *mcp.CallToolResult) Result {
	res := Result{IsError: r.IsError, NeedsInput: r.NeedsInput(), Content: make([]Content, len(r.Content))}
	for i, c := range r.Content {
		switch t := c.(type) {
		case mcp.TextContent:
			res.Content[i] = TextContent(t.Text)
		case *mcp.TextContent:
			res.Content[i] = TextContent(t.Text)
		default:
			res.Content[i] = Content{Other: c}
		}
	}
	switch {
	case len(r.RawStructuredContent) > 0:
		res.Structured = r.RawStructuredContent
	case r.StructuredContent != nil:
		res.Structured = r.StructuredContent
	}
	return res
}

// toMCPGo builds the mcp-go result for a replaced result, keeping the
// original's _meta.
func toMCPGo(orig *mcp.CallToolResult, res Result) *mcp.CallToolResult {
	r := &mcp.CallToolResult{IsError: res.IsError, Content: make([]mcp.Content, len(res.Content))}
	if orig != nil {
		r.Result = orig.Result
	}
	for i, c := range res.Content {
		if other, ok := c.Other.(mcp.Content); ok {
			r.Content[i] = other
		} else {
			r.Content[i] = mcp.NewTextContent(c.Text)
		}
	}
	r.StructuredContent = res.Structured
	return r
}
