package lro

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/proxywire"
)

// The mcp-go adapter's own state and what it does with it: the proxy
// clients it learns of, the task tools it wraps, a result sent once to a
// proxy.

// mcpGo is the mcp-go adapter's own state, which the engine knows
// nothing of.
type mcpGo struct {
	// proxies remembers the sessions whose initialize request said
	// clientInfo.proxy = true (the only place an older client says it).
	proxies sync.Map
	// wrapped holds the task tools a wrapper of TaskHandler serves.
	wrapped sync.Map
}

// AddHooks registers on h what the Offloader needs to see in raw requests:
// the initialize request of a proxy client, whose clientInfo.proxy field
// the SDK's typed client info drops, and the results of task tools, so
// that a task tool whose handler is not wrapped by [Offloader.TaskHandler]
// is logged once when its result goes out inline over the threshold; and
// the end of sessions, whose session budget it forgets.
// [Offloader.ServerOption] does this for you when the server already has
// hooks (server.WithHooks given before it) or has none.
func (o *Offloader) AddHooks(h *server.Hooks) {
	o.addTaskHooks(h)
	h.AddOnRequestInitialization(func(ctx context.Context, _ any, message any) error {
		raw, ok := message.(json.RawMessage)
		if !ok || !initializeFromProxy(raw) {
			return nil
		}
		if s := server.ClientSessionFromContext(ctx); s != nil && s.SessionID() != "" {
			o.mcpgo.proxies.Store(s.SessionID(), true)
		}
		return nil
	})
	h.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		o.mcpgo.proxies.Delete(s.SessionID())
		o.EndSession(s.SessionID())
	})
}

func initializeFromProxy(raw json.RawMessage) bool {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ClientInfo   map[string]any `json:"clientInfo"`
			Capabilities struct {
				Experimental map[string]any `json:"experimental"`
			} `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &msg) != nil || msg.Method != string(mcp.MethodInitialize) {
		return false
	}
	return host.ProxyAnnounced(msg.Params.ClientInfo, msg.Params.Capabilities.Experimental)
}

// IsProxyClient reports whether the client of the current request is an
// LRO proxy, which offloads on its own side and so wants full results
// inline. It looks at every channel a proxy may use: clientInfo.proxy in
// the request's _meta (protocol 2026-07-28), the experimental capability
// [host.ProxyCapability] in the request's _meta or the session, and the
// session's initialize request.
func (o *Offloader) IsProxyClient(ctx context.Context, req mcp.CallToolRequest) bool {
	if m := req.Params.Meta; m != nil {
		if ci, ok := m.AdditionalFields[mcp.MetaKeyClientInfo].(map[string]any); ok && host.ProxyAnnounced(ci, nil) {
			return true
		}
	}
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil {
		if host.ProxyAnnounced(nil, info.ClientCapabilities.Experimental) {
			return true
		}
	}
	s := server.ClientSessionFromContext(ctx)
	if s == nil {
		return false
	}
	if ws, ok := s.(server.SessionWithClientInfo); ok && host.ProxyAnnounced(nil, ws.GetClientCapabilities().Experimental) {
		return true
	}
	_, ok := o.mcpgo.proxies.Load(s.SessionID())
	return ok
}

// TaskHandler returns next, the handler of a task tool (registered with
// (*server.MCPServer).AddTaskTool), with offloading under the policy of the
// tool called, as [Offloader.Middleware] offloads an ordinary tool: mcp-go
// applies tool middleware to ordinary tools only, also when they are
// called as tasks, never to task tools.
//
//	s.AddTaskTool(tool, off.TaskHandler(handler))
//
// Results pass through on the same terms as the middleware's. An
// offloaded result keeps the handler's task and _meta; its content,
// structured content and error flag are replaced, and tasks/result returns
// the descriptor. mcp-go offers no lookup of a task tool's definition, so
// a policy's SkipOutputSchema does not apply here: leave a tool whose
// results must stay inline unwrapped. A task tool left unwrapped whose
// result is over the threshold is logged once by the hooks of
// [Offloader.AddHooks].
func (o *Offloader) TaskHandler(next server.TaskToolHandlerFunc) server.TaskToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		o.markTaskWrapped(req.Params.Name)
		return serveMCPGoAs(o, ctx, req, nil, next, fromTaskResult, toTaskResult)
	}
}

// WrapTask returns next with offloading under policy, whatever the
// Offloader's configured tools: [Offloader.Wrap] for task tools.
func (o *Offloader) WrapTask(policy ToolPolicy, next server.TaskToolHandlerFunc) server.TaskToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		o.markTaskWrapped(req.Params.Name)
		return serveMCPGoAs(o, ctx, req, &policy, next, fromTaskResult, toTaskResult)
	}
}

// markTaskWrapped records that tool is served by a wrapper, so that the
// hook of AddHooks tells a result the wrapper left inline on purpose (for
// a proxy client, a tool without a policy, a failed write: each logged, if
// at all, by the core) from one that was never offered to it. It runs
// before the handler, so the record exists by the time tasks/result,
// which waits for the handler, can return its result.
func (o *Offloader) markTaskWrapped(tool string) {
	o.mcpgo.wrapped.LoadOrStore(tool, true)
}

// isTaskWrapped reports whether a wrapper has served tool.
func (o *Offloader) isTaskWrapped(tool string) bool {
	_, ok := o.mcpgo.wrapped.Load(tool)
	return ok
}

// fromTaskResult views a task tool's result in the host-neutral form.
func fromTaskResult(r *mcp.CreateTaskResult) host.Result {
	return fromMCPGoFields(r.Content, r.StructuredContent, r.IsError)
}

// toTaskResult builds the task result for a replaced result, keeping the
// original's task and _meta.
func toTaskResult(orig *mcp.CreateTaskResult, res host.Result) *mcp.CreateTaskResult {
	r := &mcp.CreateTaskResult{IsError: res.IsError, Content: toMCPGoContent(res.Content), StructuredContent: res.Structured}
	if orig != nil {
		r.Result, r.Task = orig.Result, orig.Task
	}
	return r
}

// maxPendingTasks bounds the tasks addTaskHooks remembers: a client may
// never fetch a result. Past it, new tasks are not watched, which costs at
// most a warning.
const maxPendingTasks = 1024

// pendingTasks names the tool of each watched task from the tools/call
// that created it to its tasks/result, which names only the task.
type pendingTasks struct {
	mu    sync.Mutex
	tools map[string]string // task ID → tool name
}

func (p *pendingTasks) add(task, tool string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tools) < maxPendingTasks {
		p.tools[task] = tool
	}
}

func (p *pendingTasks) take(task string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	tool, ok := p.tools[task]
	delete(p.tools, task)
	return tool, ok
}

// addTaskHooks registers the hooks that log an unwrapped task tool's large
// result (see AddHooks). mcp-go's tasks/result names the task, not the
// tool: the task's tools/call, whose result carries the task ID, tells
// which tool it is. tasks/result waits for the handler, so by then a
// wrapper has recorded the tool if it serves it.
func (o *Offloader) addTaskHooks(h *server.Hooks) {
	p := &pendingTasks{tools: make(map[string]string)}
	h.AddAfterCallTool(func(ctx context.Context, _ any, req *mcp.CallToolRequest, result any) {
		if created, ok := result.(*mcp.CreateTaskResult); ok && created != nil && o.watchesTask(ctx, req) {
			p.add(created.Task.TaskId, req.Params.Name)
		}
	})
	h.AddAfterTaskResult(func(ctx context.Context, _ any, req *mcp.TaskResultRequest, result *mcp.TaskResultResult) {
		tool, ok := p.take(req.Params.TaskId)
		if !ok || result == nil || o.isTaskWrapped(tool) {
			return
		}
		why := "is a task tool whose handler is not wrapped (mcp-go's tool middleware does not reach task tools): register it with s.AddTaskTool(tool, off.TaskHandler(handler)) to offload it"
		if _, ok := o.policyFor(tool); !ok {
			why += fmt.Sprintf(", and give it a policy with lro.WithTool(%q, lro.ToolPolicy{Generic: true})", tool)
		}
		o.warnIfLarge(ctx, tool, fromMCPGoFields(result.Content, result.StructuredContent, result.IsError), why)
	})
	h.AddAfterCancelTask(func(_ context.Context, _ any, req *mcp.CancelTaskRequest, _ *mcp.CancelTaskResult) {
		p.take(req.Params.TaskId)
	})
}

// watchesTask reports whether the task-augmented call req is to a task
// tool that could be offloaded and that no wrapper has served. Ordinary
// tools called as tasks go through the tool middleware, which warns on its
// own terms; a proxy client and a disabled Offloader get results inline
// in any case.
func (o *Offloader) watchesTask(ctx context.Context, req *mcp.CallToolRequest) bool {
	tool := req.Params.Name
	if !o.cfg.IsEnabled() || tool == ExtractToolName || o.isTaskWrapped(tool) || o.IsProxyClient(ctx, *req) {
		return false
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil || srv.GetTool(tool) != nil {
		return false
	}
	// A session's own tool takes precedence over a task tool of that name,
	// as in mcp-go's routing.
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithTools); ok {
		if _, own := s.GetSessionTools()[tool]; own {
			return false
		}
	}
	return true
}

// A result is sent to an LRO proxy with its data once (see package
// internal/proxywire): a server leaves out structured content that its one
// text item repeats, and the proxy puts it back as soon as it has the
// result. What follows is both sides of that for mcp-go.

// proxyRestores reports whether the client of the current request is an
// LRO proxy that restores structured content left out: it said so in the
// capabilities of the request's _meta (protocol 2026-07-28) or of its
// session.
func proxyRestores(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil &&
		proxywire.Announced(info.ClientCapabilities.Experimental) {
		return true
	}
	s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	return ok && proxywire.Announced(s.GetClientCapabilities().Experimental)
}

// withoutRepeat returns r without its structured content, marked, when
// its one plain text item repeats it; otherwise r itself. r is the
// handler's own value: the result returned is a copy.
func withoutRepeat(r *mcp.CallToolResult) *mcp.CallToolResult {
	if r == nil || r.IsError || r.NeedsInput() || len(r.Content) != 1 {
		return r
	}
	var t mcp.TextContent
	switch c := r.Content[0].(type) {
	case mcp.TextContent:
		t = c
	case *mcp.TextContent:
		t = *c
	default:
		return r
	}
	if t.Annotations != nil || t.Meta != nil {
		return r // kept whole: what is rebuilt is the text alone
	}
	var structured any = r.StructuredContent
	if len(r.RawStructuredContent) > 0 {
		structured = r.RawStructuredContent
	}
	if !proxywire.Repeats(t.Text, structured) {
		return r
	}
	out := *r
	out.StructuredContent, out.RawStructuredContent = nil, nil
	meta := &mcp.Meta{AdditionalFields: map[string]any{proxywire.MetaKey: true}}
	if m := r.Meta; m != nil {
		meta.ProgressToken = m.ProgressToken
		maps.Copy(meta.AdditionalFields, m.AdditionalFields)
	}
	out.Meta = meta
	return &out
}
