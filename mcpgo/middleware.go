package mcpgo

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
)

// ServerOption returns a server.ServerOption that adds [Middleware], the
// hooks of [AddHooks], the resource templates of [AddResources] (so that
// offloaded results link to their file, unless
// [lro.WithoutResourceLinks]), and a tool filter that lists the output
// schema of each tool the Offloader may offload widened to admit the
// descriptor too (see [lro.Host.ListedOutputSchema]), so that clients
// which validate structured content accept it:
//
//	s := server.NewMCPServer("memory", "1.0.0", mcpgo.ServerOption(off))
//
// Give it after server.WithHooks, which would replace the hooks it adds.
// With server.WithOutputSchemaValidation, which validates against the
// registered tool and not the listed one, also register the tools through
// [WidenTool]:
//
//	s := server.NewMCPServer("memory", "1.0.0", server.WithOutputSchemaValidation(), mcpgo.ServerOption(off))
//	s.AddTool(mcpgo.WidenTool(off, tool), handler)
func ServerOption(off *lro.Offloader) server.ServerOption {
	mw := server.WithToolHandlerMiddleware(Middleware(off))
	filter := server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool {
		return listed(off, tools)
	})
	return func(s *server.MCPServer) {
		mw(s)
		filter(s)
		AddResources(s, off)
		h := s.GetHooks()
		if h == nil {
			h = &server.Hooks{}
			server.WithHooks(h)(s)
		}
		AddHooks(h, off)
	}
}

// Middleware returns mcp-go tool middleware that offloads large results of
// the tools with a policy (see [lro.WithTool]; the specification's
// recall_memories, inject_context, list_memories and search tools have one
// built in). Add it with server.WithToolHandlerMiddleware or
// (*server.MCPServer).Use, or use [ServerOption], which also widens the
// output schemas the server lists.
//
// Results pass through untouched when they come from a tool without a
// policy or whose policy sets SkipOutputSchema, or when offloading is
// disabled; errors and results that ask for more input pass too, unless
// they are over the threshold and [lro.NoticeTokens], when they are cut at
// the gate (see [lro.Host.Serve]). A result that is offloaded has its text
// and structured content replaced by the descriptor. An invalid detail
// argument is returned as a tool error.
//
// A server with server.WithOutputSchemaValidation checks results against
// the output schema the tool was registered with, before they leave the
// server: register tools that declare one through [WidenTool], or their
// descriptors become validation errors.
func Middleware(off *lro.Offloader) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return serve(ctx, off, req, next, nil)
		}
	}
}

// Wrap returns handler with offloading under policy, whatever the
// Offloader's configured tools: for servers that wrap handlers one by one.
// Register a tool that declares an output schema through [WidenTool]: the
// Offloader does not know the tool's policy, so the tool filter of
// [ServerOption] leaves its schema as it is.
func Wrap(off *lro.Offloader, policy lro.ToolPolicy, handler server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return serve(ctx, off, req, handler, &policy)
	}
}

// serve translates an mcp-go call to [lro.Host.Serve] and back.
func serve(ctx context.Context, off *lro.Offloader, req mcp.CallToolRequest, next server.ToolHandlerFunc, policy *lro.ToolPolicy) (*mcp.CallToolResult, error) {
	res, err := serveAs(ctx, off, req, policy, next, fromResult, toResult)
	if err == nil && proxyRestores(ctx) {
		res = withoutRepeat(res)
	}
	return res, err
}

// serveAs is serve for a handler whose result is an R: a tool's
// mcp.CallToolResult or a task tool's mcp.CreateTaskResult (see
// [TaskHandler]), which from and to translate. It runs under policy when
// not nil, else under the tool's configured one.
func serveAs[R any](ctx context.Context, off *lro.Offloader, req mcp.CallToolRequest, policy *lro.ToolPolicy,
	next func(context.Context, mcp.CallToolRequest) (*R, error), from func(*R) host.Result, to func(*R, host.Result) *R) (*R, error) {
	h := off.Host()
	call := host.Call{
		Tool:      req.Params.Name,
		Arguments: req.GetArguments(),
		FromProxy: IsProxyClient(ctx, req, off),
		Resources: h.ServesResources(),
	}
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		call.Session = cs.SessionID()
		if ci, ok := cs.(server.SessionWithClientInfo); ok {
			info := ci.GetClientInfo()
			call.Client = host.ClientInfo{Name: info.Name, Version: info.Version}
			if h.WantsClientCapabilities() {
				call.Client.Capabilities, _ = json.Marshal(ci.GetClientCapabilities())
			}
		}
	}
	if srv := server.ServerFromContext(ctx); srv != nil {
		// GetTool knows ordinary tools only: a task tool's output schema
		// is not seen (see TaskHandler).
		if st := srv.GetTool(call.Tool); st != nil {
			call.OutputSchema = st.Tool.OutputSchema.Type != "" || len(st.Tool.RawOutputSchema) > 0
			call.InputSchema = func() json.RawMessage { return inputSchemaOf(st.Tool) }
		}
		call.NativeExtract = srv.GetTool(lro.ExtractToolName) != nil
	} else {
		call.NativeExtract = h.ServesExtract()
	}
	var orig *R
	run := func(ctx context.Context) (host.Result, error) {
		var err error
		orig, err = next(ctx, req)
		if err != nil || orig == nil {
			return host.Result{}, err
		}
		return from(orig), nil
	}
	var (
		res      host.Result
		replaced bool
		err      error
	)
	ctx = withProgress(ctx, req.Params.Meta) // for a long offload
	if policy != nil {
		res, replaced, err = h.ServeWith(ctx, call, *policy, run)
	} else {
		res, replaced, err = h.Serve(ctx, call, run)
	}
	if !replaced || err != nil {
		return orig, err
	}
	return to(orig, res), nil
}
