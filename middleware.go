package lro

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/mcplro/lro/internal/admit"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/adapt"
	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/outputschema"
)

// Middleware returns mcp-go tool middleware that offloads large results of
// the tools with a policy (see [WithTool]; the specification's
// recall_memories, inject_context, list_memories and search tools have one
// built in). Add it with server.WithToolHandlerMiddleware or
// (*server.MCPServer).Use, or use [Offloader.ServerOption], which also
// widens the output schemas the server lists.
//
// Results pass through untouched when they come from a tool without a
// policy or whose policy sets SkipOutputSchema, or when offloading is
// disabled; errors and results that ask for more input pass too, unless
// they are over the threshold and [NoticeTokens], when they are cut at the
// gate (see [Host.Serve]). A result that is offloaded has its text and
// structured content replaced by the descriptor. An invalid detail
// argument is returned as a tool error.
//
// A server with server.WithOutputSchemaValidation checks results against
// the output schema the tool was registered with, before they leave the
// server: register tools that declare one through [Offloader.WidenTool],
// or their descriptors become validation errors.
func (o *Offloader) Middleware() server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return o.serveMCPGo(ctx, req, next, nil)
		}
	}
}

// ServerOption returns a server.ServerOption that adds
// [Offloader.Middleware], the hooks of [Offloader.AddHooks], the resource
// templates of [Offloader.AddResources] (so that offloaded results link to
// their file, unless [WithoutResourceLinks]), and a tool
// filter that lists the output schema of each tool the Offloader may
// offload widened to admit the descriptor too (see
// [Host.ListedOutputSchema]), so that clients which validate
// structured content accept it:
//
//	s := server.NewMCPServer("memory", "1.0.0", off.ServerOption())
//
// Give it after server.WithHooks, which would replace the hooks it adds.
// With server.WithOutputSchemaValidation, which validates against the
// registered tool and not the listed one, also register the tools through
// [Offloader.WidenTool]:
//
//	s := server.NewMCPServer("memory", "1.0.0", server.WithOutputSchemaValidation(), off.ServerOption())
//	s.AddTool(off.WidenTool(tool), handler)
func (o *Offloader) ServerOption() server.ServerOption {
	mw := server.WithToolHandlerMiddleware(o.Middleware())
	filter := server.WithToolFilter(o.filterTools)
	return func(s *server.MCPServer) {
		mw(s)
		filter(s)
		o.AddResources(s)
		h := s.GetHooks()
		if h == nil {
			h = &server.Hooks{}
			server.WithHooks(h)(s)
		}
		o.AddHooks(h)
	}
}

// WidenTool returns t with its output schema widened by
// [WidenOutputSchema] to admit the descriptor, for a server that validates
// results against registered schemas (server.WithOutputSchemaValidation):
//
//	s.AddTool(off.WidenTool(tool), handler)
//
// t is returned as it is when it declares no output schema, when
// offloading is disabled, when it is lro_extract or its policy sets
// SkipOutputSchema, or when its schema cannot be widened. Unlike
// [Host.ListedOutputSchema] it widens the schema of a tool without a
// policy of the Offloader, since a tool wrapped one by one with
// [Offloader.Wrap] has none; widening admits more and rejects nothing.
// The tool filter of [Offloader.ServerOption] does not widen it again.
func (o *Offloader) WidenTool(t mcp.Tool) mcp.Tool {
	if !o.cfg.IsEnabled() || t.Name == ExtractToolName {
		return t
	}
	if p, ok := o.policyFor(t.Name); ok && p.SkipOutputSchema {
		return t
	}
	schema := outputSchemaOf(t)
	if schema == nil {
		return t
	}
	return withOutputSchema(t, outputschema.Widened(schema))
}

// filterTools is the tool filter of ServerOption: it lists tools with the
// output schemas of [Host.ListedOutputSchema]. mcp-go runs it on
// tools/list and on every tools/call (with the one tool called), on the
// server's own values: it changes copies.
func (o *Offloader) filterTools(_ context.Context, tools []mcp.Tool) []mcp.Tool {
	return adapt.Replaced(tools, func(t mcp.Tool) (mcp.Tool, bool) {
		if !o.widens(t.Name) { // first: the schema of a typed tool costs a marshal
			return t, false
		}
		schema := outputSchemaOf(t)
		if w := o.Host().ListedOutputSchema(t.Name, schema); !bytes.Equal(w, schema) {
			return withOutputSchema(t, w), true
		}
		return t, false
	})
}

// outputSchemaOf returns the output schema of t as JSON, or nil.
func outputSchemaOf(t mcp.Tool) json.RawMessage {
	if len(t.RawOutputSchema) > 0 {
		return t.RawOutputSchema
	}
	if t.OutputSchema.Type == "" {
		return nil // mcp-go does not send it either
	}
	b, err := json.Marshal(t.OutputSchema)
	if err != nil {
		return nil
	}
	return b
}

// withOutputSchema returns t declaring schema. The typed schema is
// cleared: mcp.Tool refuses to marshal with both set.
func withOutputSchema(t mcp.Tool, schema json.RawMessage) mcp.Tool {
	t.OutputSchema, t.RawOutputSchema = mcp.ToolOutputSchema{}, schema
	return t
}

// Wrap returns handler with offloading under policy, whatever the
// Offloader's configured tools: for servers that wrap handlers one by one.
// Register a tool that declares an output schema through
// [Offloader.WidenTool]: the Offloader does not know the tool's policy, so
// the tool filter of [Offloader.ServerOption] leaves its schema as it is.
func (o *Offloader) Wrap(policy ToolPolicy, handler server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return o.serveMCPGo(ctx, req, handler, &policy)
	}
}

// serveMCPGo translates an mcp-go call to [Host.Serve] and back.
func (o *Offloader) serveMCPGo(ctx context.Context, req mcp.CallToolRequest, next server.ToolHandlerFunc, policy *ToolPolicy) (*mcp.CallToolResult, error) {
	res, err := serveMCPGoAs(o, ctx, req, policy, next, fromMCPGo, toMCPGo)
	if err == nil && proxyRestores(ctx) {
		res = withoutRepeat(res)
	}
	return res, err
}

// serveMCPGoAs is serveMCPGo for a handler whose result is an R: a tool's
// mcp.CallToolResult or a task tool's mcp.CreateTaskResult (see
// [Offloader.TaskHandler]), which from and to translate. It runs under
// policy when not nil, else under the tool's configured one.
func serveMCPGoAs[R any](o *Offloader, ctx context.Context, req mcp.CallToolRequest, policy *ToolPolicy,
	next func(context.Context, mcp.CallToolRequest) (*R, error), from func(*R) host.Result, to func(*R, host.Result) *R) (*R, error) {
	call := host.Call{
		Tool:      req.Params.Name,
		Arguments: req.GetArguments(),
		FromProxy: o.IsProxyClient(ctx, req),
		Resources: o.Host().ServesResources(),
	}
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		call.Session = cs.SessionID()
		if ci, ok := cs.(server.SessionWithClientInfo); ok {
			info := ci.GetClientInfo()
			call.Client = host.ClientInfo{Name: info.Name, Version: info.Version}
			if o.Host().WantsClientCapabilities() {
				call.Client.Capabilities, _ = json.Marshal(ci.GetClientCapabilities())
			}
		}
	}
	if srv := server.ServerFromContext(ctx); srv != nil {
		// GetTool knows ordinary tools only: a task tool's output schema
		// is not seen (see TaskHandler).
		if st := srv.GetTool(call.Tool); st != nil {
			call.OutputSchema = st.Tool.OutputSchema.Type != "" || len(st.Tool.RawOutputSchema) > 0
		}
		call.NativeExtract = srv.GetTool(ExtractToolName) != nil
	} else {
		call.NativeExtract = o.extractor.Served()
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
	if policy != nil {
		res, replaced, err = o.serveWith(ctx, call, *policy, run)
	} else {
		res, replaced, err = o.Host().Serve(ctx, call, run)
	}
	if !replaced || err != nil {
		return orig, err
	}
	return to(orig, res), nil
}

// fromMCPGo views an mcp-go result in the host-neutral form.
func fromMCPGo(r *mcp.CallToolResult) host.Result {
	res := fromMCPGoFields(r.Content, r.StructuredContent, r.IsError)
	res.NeedsInput = r.NeedsInput()
	if len(r.RawStructuredContent) > 0 {
		res.Structured = r.RawStructuredContent
	}
	return res
}

// fromMCPGoFields views the fields every mcp-go tool result has, a
// tool's or a task tool's, in the host-neutral form.
func fromMCPGoFields(content []mcp.Content, structured any, isError bool) host.Result {
	res := host.Result{IsError: isError, Structured: structured, Content: make([]host.Content, len(content))}
	for i, c := range content {
		switch t := c.(type) {
		case mcp.TextContent:
			res.Content[i] = host.TextContent(t.Text)
		case *mcp.TextContent:
			res.Content[i] = host.TextContent(t.Text)
		case mcp.EmbeddedResource:
			res.Content[i] = embeddedMCPGo(t.Resource, c)
		case *mcp.EmbeddedResource:
			res.Content[i] = embeddedMCPGo(t.Resource, c)
		default:
			res.Content[i] = host.Content{Other: c}
		}
	}
	return res
}

// embeddedMCPGo views an embedded resource: a text resource is text to
// judge, a binary one an item kept as it is.
func embeddedMCPGo(r mcp.ResourceContents, item mcp.Content) host.Content {
	switch t := r.(type) {
	case mcp.TextResourceContents:
		return host.Content{Text: t.Text, URI: t.URI, Other: item}
	case *mcp.TextResourceContents:
		return host.Content{Text: t.Text, URI: t.URI, Other: item}
	}
	return host.Content{Other: item}
}

// toMCPGo builds the mcp-go result for a replaced result, keeping the
// original's _meta.
func toMCPGo(orig *mcp.CallToolResult, res host.Result) *mcp.CallToolResult {
	r := &mcp.CallToolResult{IsError: res.IsError, Content: toMCPGoContent(res.Content), StructuredContent: res.Structured}
	if orig != nil {
		// The result type and input requests of a result that asks for
		// input, cut at the gate, go out too.
		r.Result, r.MultiRoundTripResult = orig.Result, orig.MultiRoundTripResult
	}
	return r
}

// toMCPGoContent builds the mcp-go content items of a replaced result.
func toMCPGoContent(content []host.Content) []mcp.Content {
	out := make([]mcp.Content, len(content))
	for i, c := range content {
		if other, ok := c.Other.(mcp.Content); ok && c.Other != nil {
			out[i] = other
		} else if l := c.Link; l != nil {
			link := mcp.NewResourceLink(l.URI, l.Name, l.Description, l.MIMEType)
			size := l.Size
			link.Size = &size
			out[i] = link
		} else {
			out[i] = mcp.NewTextContent(c.Text)
		}
	}
	return out
}

// AddExtractTool registers the lro_extract tool on s: the model queries an
// offloaded file with jq through MCP, without a shell. From then on the
// descriptors' guidance points to lro_extract (the specification's native
// guidance); jq_recipes stay for clients with a shell.
//
// The tool reads only files this Offloader wrote, runs queries with gojq
// in worker processes that are killed at their deadline and have a memory
// limit (see [ExtractLimits] for where queries run and what each place
// guarantees), and caps its own results at the threshold instead of
// offloading them.
func (o *Offloader) AddExtractTool(s *server.MCPServer) {
	def := o.Host().ExtractToolDefinition()
	tool := mcp.NewToolWithRawSchema(def.Name, def.Description, def.InputSchema)
	tool.Annotations = mcp.ToolAnnotation{
		Title:           "Query an offloaded result",
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	}
	s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := o.Extract(withSession(ctx), req.GetArguments())
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(text), nil
	})
}

// AddResources registers on s the resource templates of offloaded files
// (see [Host.ServeResources]): clients read a file, or a range of its
// lines, with resources/read, wherever their disk is, and offloaded
// results carry a resource link to their file. Registering a template
// makes s declare the resources capability. With [WithoutResourceLinks] it
// does nothing.
func (o *Offloader) AddResources(s *server.MCPServer) {
	for _, t := range o.Host().ServeResources() {
		opts := []mcp.ResourceTemplateOption{mcp.WithTemplateDescription(t.Description)}
		if t.MIMEType != "" {
			opts = append(opts, mcp.WithTemplateMIMEType(t.MIMEType))
		}
		s.AddResourceTemplate(mcp.NewResourceTemplate(t.URITemplate, t.Name, opts...), o.readMCPGo)
	}
}

// readMCPGo answers resources/read on an mcp-go server. mcp-go v1.2.1
// answers every error of a resource handler as an internal error (-32603;
// server/handler_errors.go): unlike the official SDK's adapter, which
// answers [ErrResourceTooLarge] as invalid params (-32602) and
// [ErrResourceNotFound] as resource not found, this one cannot choose the
// code, and the message alone says which error it is.
func (o *Offloader) readMCPGo(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	if srv := server.ServerFromContext(ctx); srv != nil {
		// The too-large error names lro_extract plainly when s has it.
		ctx = extract.WithNative(ctx, srv.GetTool(ExtractToolName) != nil)
	}
	c, err := o.Host().ReadResource(withSession(ctx), req.Params.URI)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}}, nil
}

// withSession names the request's MCP session in ctx, for the admission
// of lro_extract calls and resource reads (see internal/admit), which is
// fair between sessions. A request of protocol 2026-07-28 over HTTP has a
// session of its own, without an id: its client, as it names itself in
// _meta, stands for its session (a client that takes another's name
// shares its turn).
func withSession(ctx context.Context) context.Context {
	if cs := server.ClientSessionFromContext(ctx); cs != nil && cs.SessionID() != "" {
		return admit.WithSession(ctx, cs.SessionID())
	}
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil {
		return admit.WithSession(ctx, "client:"+info.ClientInfo.Name+"/"+info.ClientInfo.Version)
	}
	return ctx
}
