package mcpgo

import (
	"context"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
)

// TaskHandler returns next, the handler of a task tool (registered with
// (*server.MCPServer).AddTaskTool), with offloading under the policy of the
// tool called, as [Middleware] offloads an ordinary tool: mcp-go applies
// tool middleware to ordinary tools only, also when they are called as
// tasks, never to task tools.
//
//	s.AddTaskTool(tool, mcpgo.TaskHandler(off, handler))
//
// Results pass through on the same terms as the middleware's. An
// offloaded result keeps the handler's task and _meta; its content,
// structured content and error flag are replaced, and tasks/result returns
// the descriptor. mcp-go offers no lookup of a task tool's definition, so
// a policy's SkipOutputSchema does not apply here: leave a tool whose
// results must stay inline unwrapped. A task tool left unwrapped whose
// result is over the threshold is logged once by the hooks of
// [AddHooks].
func TaskHandler(off *lro.Offloader, next server.TaskToolHandlerFunc) server.TaskToolHandlerFunc {
	return wrapTask(off, nil, next)
}

// WrapTask returns next with offloading under policy, whatever the
// Offloader's configured tools: [Wrap] for task tools.
func WrapTask(off *lro.Offloader, policy lro.ToolPolicy, next server.TaskToolHandlerFunc) server.TaskToolHandlerFunc {
	return wrapTask(off, &policy, next)
}

// wrapTask is TaskHandler under policy when not nil. Each call records
// that the tool is served by a wrapper, so that the hook of AddHooks tells
// a result the wrapper left inline on purpose (for a proxy client, a tool
// without a policy, a failed write: each logged, if at all, by the core)
// from one that was never offered to it. It records it before the
// handler runs, so the record exists by the time tasks/result, which
// waits for the handler, can return its result.
func wrapTask(off *lro.Offloader, policy *lro.ToolPolicy, next server.TaskToolHandlerFunc) server.TaskToolHandlerFunc {
	st := stateOf(off)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		st.wrapped.LoadOrStore(req.Params.Name, true)
		return serveAs(ctx, off, req, policy, next, fromTaskResult, toTaskResult)
	}
}

// isWrapped reports whether a wrapper has served the task tool tool.
func (st *state) isWrapped(tool string) bool {
	_, ok := st.wrapped.Load(tool)
	return ok
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
func addTaskHooks(h *server.Hooks, off *lro.Offloader, st *state) {
	p := &pendingTasks{tools: make(map[string]string)}
	h.AddAfterCallTool(func(ctx context.Context, _ any, req *mcp.CallToolRequest, result any) {
		if created, ok := result.(*mcp.CreateTaskResult); ok && created != nil && watchesTask(ctx, off, st, req) {
			p.add(created.Task.TaskId, req.Params.Name)
		}
	})
	h.AddAfterTaskResult(func(ctx context.Context, _ any, req *mcp.TaskResultRequest, result *mcp.TaskResultResult) {
		tool, ok := p.take(req.Params.TaskId)
		if !ok || result == nil || st.isWrapped(tool) {
			return
		}
		why := "is a task tool whose handler is not wrapped (mcp-go's tool middleware does not reach task tools): register it with s.AddTaskTool(tool, mcpgo.TaskHandler(off, handler)) to offload it"
		if !off.Host().HasPolicy(tool) {
			why += fmt.Sprintf(", and give it a policy with lro.WithTool(%q, lro.ToolPolicy{Generic: true})", tool)
		}
		off.Host().WarnIfLarge(ctx, tool, fromFields(result.Content, result.StructuredContent, result.IsError), why)
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
func watchesTask(ctx context.Context, off *lro.Offloader, st *state, req *mcp.CallToolRequest) bool {
	tool := req.Params.Name
	if !off.Config().IsEnabled() || tool == lro.ExtractToolName || st.isWrapped(tool) || IsProxyClient(ctx, *req, off) {
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
