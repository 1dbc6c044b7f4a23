package gosdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/adapt"
	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Install adds the offload middleware to s, as
// s.AddReceivingMiddleware(Middleware(off)) does, and the resource
// templates of [AddResources], so that offloaded results link to their
// file and any client can read it (unless [lro.WithoutResourceLinks]).
func Install(s *mcp.Server, off *lro.Offloader) {
	s.AddReceivingMiddleware(Middleware(off))
	AddResources(s, off)
}

// Middleware returns receiving middleware for
// (*mcp.Server).AddReceivingMiddleware that offloads large results of the
// tools with a policy, exactly as mcpgo.Middleware does for
// mcp-go: tools without a policy or whose policy sets SkipOutputSchema,
// proxy clients and a disabled Offloader pass through; errors and results
// that ask for input pass too unless they are over the threshold and
// [lro.NoticeTokens], when they are cut at the gate (see
// [lro.Host.Serve]); an offloaded result has its text and structured
// content replaced by the descriptor; an invalid detail argument becomes a
// tool error.
//
// It also lists the output schema of each tool it may offload widened to
// admit the descriptor (see [lro.Host.ListedOutputSchema]), so that
// clients which validate structured content accept it. The server's own
// check of a typed tool's output ([mcp.AddTool]) runs in the tool's
// handler, before the descriptor replaces the output, so it needs nothing.
//
// Give each server its own Middleware: it remembers the server's tools.
func Middleware(off *lro.Offloader) mcp.Middleware {
	a := &adapter{off: off, schemas: map[string]bool{}, inputs: map[string]*mcp.Tool{}, sessions: map[*mcp.ServerSession]string{}}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/call":
				if r, ok := req.(*mcp.CallToolRequest); ok {
					return a.call(ctx, r, next)
				}
			case "tools/list":
				res, err := next(ctx, method, req)
				if l, ok := res.(*mcp.ListToolsResult); ok && err == nil {
					a.learn(l.Tools)
					l.Tools = widen(off, l.Tools)
				}
				return res, err
			}
			return next(ctx, method, req)
		}
	}
}

// adapter is the state of one server's middleware: what it learned of the
// server's tools.
type adapter struct {
	off *lro.Offloader

	mu       sync.Mutex
	schemas  map[string]bool      // tool name: declares an output schema
	inputs   map[string]*mcp.Tool // tool name: the tool, whose input schema the engine may read
	native   bool                 // the server lists lro_extract
	sessions map[*mcp.ServerSession]string
}

// session returns the key of ss for the session budget: its ID, or, for
// a connection without one (stdio), the connection itself. The first
// time a session is seen while a session budget is set, a goroutine waits
// for its end to forget it.
func (a *adapter) session(ss *mcp.ServerSession) string {
	id := sessionKey(ss)
	if a.off.Config().SessionBudgetTokens <= 0 {
		return id
	}
	a.mu.Lock()
	_, seen := a.sessions[ss]
	if !seen {
		a.sessions[ss] = id
	}
	a.mu.Unlock()
	if !seen {
		go func() {
			_ = ss.Wait()
			a.off.EndSession(id)
			a.mu.Lock()
			delete(a.sessions, ss)
			a.mu.Unlock()
		}()
	}
	return id
}

func (a *adapter) call(ctx context.Context, req *mcp.CallToolRequest, next mcp.MethodHandler) (mcp.Result, error) {
	call := host.Call{FromProxy: IsProxyClient(req), Resources: a.off.Host().ServesResources()}
	if req.Params != nil {
		call.Tool = req.Params.Name
		call.Arguments = arguments(req.Params.Arguments)
	}
	call.OutputSchema, call.NativeExtract = a.tool(ctx, req, next, call.Tool)
	call.InputSchema = func() json.RawMessage { return a.inputSchema(call.Tool) }
	if ss := req.Session; ss != nil {
		call.Session = a.session(ss)
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
			call.Client = host.ClientInfo{Name: p.ClientInfo.Name, Version: p.ClientInfo.Version}
			if p.Capabilities != nil && a.off.Host().WantsClientCapabilities() {
				call.Client.Capabilities, _ = json.Marshal(p.Capabilities)
			}
		}
	}

	var orig *mcp.CallToolResult
	ctx = withProgress(ctx, req) // for a long offload
	res, replaced, err := a.off.Host().Serve(ctx, call, func(ctx context.Context) (host.Result, error) {
		r, err := next(ctx, "tools/call", req)
		if err != nil {
			return host.Result{}, err
		}
		orig, _ = r.(*mcp.CallToolResult)
		if orig == nil {
			return host.Result{}, nil
		}
		return fromSDK(orig), nil
	})
	if err != nil {
		return nil, err
	}
	if !replaced {
		if proxyRestores(req) {
			return withoutRepeat(orig), nil
		}
		return orig, nil
	}
	return toSDK(req, orig, res), nil
}

// arguments decodes the members of a call's arguments that the engine
// reads, as json.Unmarshal into a map would decode them (escaped keys
// decoded, the last of duplicate keys winning); nil when the arguments
// are not a JSON object, which is the handler's to refuse. Decoding
// every member, to read a few, was half the time the middleware added to
// a call whose result stays inline.
func arguments(raw json.RawMessage) map[string]any {
	if len(raw) == 0 || !jsonscan.Valid(raw) {
		return nil
	}
	var args map[string]any
	_ = jsonscan.Fields(raw, func(f jsonscan.Field) bool {
		key := f.Key
		if bytes.IndexByte(key, '\\') >= 0 {
			k, _ := jsonscan.Unquote(append(append([]byte{'"'}, key...), '"'))
			key = []byte(k)
		}
		if adapt.Reads(key) {
			// Most are strings: unquoted as encoding/json would, without
			// its reflection.
			var v any
			if str, ok := jsonscan.Unquote(f.Value); ok {
				v = str
			} else if json.Unmarshal(f.Value, &v) != nil {
				return true
			}
			if args == nil {
				args = make(map[string]any, 2)
			}
			args[string(key)] = v
		}
		return true
	})
	return args
}

// inputSchema returns the input schema of the tool name as JSON, or nil
// when the tool is not known (see host.Call.InputSchema).
func (a *adapter) inputSchema(name string) json.RawMessage {
	a.mu.Lock()
	t := a.inputs[name]
	a.mu.Unlock()
	if t == nil || t.InputSchema == nil {
		return nil
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil
	}
	return b
}

// tool reports whether the tool declares an output schema and whether the
// server has lro_extract, listing the server's tools when the tool is not
// known yet.
func (a *adapter) tool(ctx context.Context, req *mcp.CallToolRequest, next mcp.MethodHandler, name string) (outputSchema, native bool) {
	a.mu.Lock()
	schema, known := a.schemas[name]
	native = a.native
	a.mu.Unlock()
	if known {
		return schema, native
	}
	list := &mcp.ListToolsRequest{Session: req.Session, Params: &mcp.ListToolsParams{}}
	for range 100 { // pages; a server lists up to 1000 tools a page
		res, err := next(ctx, "tools/list", list)
		l, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok {
			break
		}
		a.learn(l.Tools)
		if l.NextCursor == "" {
			break
		}
		list.Params.Cursor = l.NextCursor
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.schemas[name], a.native
}

func (a *adapter) learn(tools []*mcp.Tool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range tools {
		if t == nil {
			continue
		}
		a.schemas[t.Name] = t.OutputSchema != nil
		a.inputs[t.Name] = t
		if t.Name == lro.ExtractToolName {
			a.native = true
		}
	}
}

// widen returns tools with the output schemas of
// [lro.Host.ListedOutputSchema]. The tools are the server's own: a
// tool that changes is a copy, in a new slice.
func widen(off *lro.Offloader, tools []*mcp.Tool) []*mcp.Tool {
	return adapt.Replaced(tools, func(t *mcp.Tool) (*mcp.Tool, bool) {
		if t == nil || t.OutputSchema == nil {
			return t, false
		}
		schema, err := json.Marshal(t.OutputSchema)
		if err != nil {
			return t, false
		}
		if w := off.Host().ListedOutputSchema(t.Name, schema); !bytes.Equal(w, schema) {
			c := *t
			c.OutputSchema = w
			return &c, true
		}
		return t, false
	})
}

// fromSDK views an SDK result in the host-neutral form.
func fromSDK(r *mcp.CallToolResult) host.Result {
	res := host.Result{IsError: r.IsError, NeedsInput: r.NeedsInput(), Structured: r.StructuredContent, Content: make([]host.Content, len(r.Content))}
	if len(r.Meta) > 0 {
		res.Meta = r.Meta
	}
	for i, c := range r.Content {
		switch t := c.(type) {
		case *mcp.TextContent:
			res.Content[i] = host.TextContent(t.Text)
		case *mcp.EmbeddedResource:
			// A resource with a text is text to judge, whatever its URI
			// and though it holds a blob too; a binary one is kept.
			res.Content[i] = host.Content{Other: c}
			if r := t.Resource; r != nil && r.Text != "" {
				res.Content[i] = host.Content{Text: r.Text, URI: r.URI, Other: c}
			}
		case *mcp.ResourceLink:
			// Its name, title and description reach the model: they
			// count toward the bound.
			res.Content[i] = host.Content{Other: c, Link: &host.ResourceLink{URI: t.URI, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType}}
		default:
			res.Content[i] = host.Content{Other: c}
		}
	}
	return res
}

// toSDK builds the SDK result for a replaced result. It starts from a copy
// of the handler's result, so that what the SDK set on it (its resultType
// under protocol 2026-07-28) goes out too, and its _meta when the engine
// kept it (see host.Result.Meta).
func toSDK(req *mcp.CallToolRequest, orig *mcp.CallToolResult, res host.Result) *mcp.CallToolResult {
	var r mcp.CallToolResult
	if orig != nil {
		r = *orig
	} else {
		r = newResult(req)
	}
	r.IsError = res.IsError
	r.StructuredContent = res.Structured
	r.Meta, _ = res.Meta.(mcp.Meta) // the handler's, when the engine kept it
	r.Content = make([]mcp.Content, len(res.Content))
	for i, c := range res.Content {
		if other, ok := c.Other.(mcp.Content); ok {
			r.Content[i] = other
		} else if l := c.Link; l != nil {
			link := &mcp.ResourceLink{URI: l.URI, Name: l.Name, Title: l.Title, Description: l.Description, MIMEType: l.MIMEType}
			if size := l.Size; size > 0 {
				link.Size = &size
			}
			r.Content[i] = link
		} else {
			r.Content[i] = &mcp.TextContent{Text: c.Text}
		}
	}
	return &r
}

// newResult returns an empty result as the SDK would have marked it: a
// complete result under protocol 2026-07-28 carries resultType, which only
// the SDK itself can set (here, by decoding).
func newResult(req *mcp.CallToolRequest) mcp.CallToolResult {
	var r mcp.CallToolResult
	if req.ProtocolVersion() >= "2026-07-28" {
		_ = json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), &r)
	}
	return r
}

// sessionKey returns the key of ss: its ID, or, for a connection without
// one (stdio), the connection itself.
func sessionKey(ss *mcp.ServerSession) string {
	if id := ss.ID(); id != "" {
		return id
	}
	return fmt.Sprintf("conn-%p", ss)
}

// withSession names the session of a request in ctx, for the admission of
// lro_extract calls and resource reads (see internal/admit), which is fair
// between sessions.
func withSession(ctx context.Context, ss *mcp.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	return admit.WithSession(ctx, sessionKey(ss))
}
