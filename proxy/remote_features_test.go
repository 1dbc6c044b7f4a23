package proxy_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplro/lro/proxy"
)

// completer completes every argument with the value and two suffixes.
type completer struct{}

func (completer) CompletePromptArgument(_ context.Context, name string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	return &mcp.Completion{Values: []string{name + ":" + arg.Value + "1", name + ":" + arg.Value + "2"}}, nil
}

func (completer) CompleteResourceArgument(_ context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	return &mcp.Completion{Values: []string{arg.Value + "-r"}}, nil
}

// TestRemotePromptsResourcesCompletions: a remote's prompts, resources,
// resource templates and completions reach the client through the proxy.
func TestRemotePromptsResourcesCompletions(t *testing.T) {
	s := server.NewMCPServer("features", "1.0.0", server.WithCompletions(), server.WithPromptCompletionProvider(completer{}),
		server.WithResourceCompletionProvider(completer{}), server.WithResourceCapabilities(true, true), server.WithPromptCapabilities(true))
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo"), nil
	})
	s.AddPrompt(mcp.NewPrompt("greet", mcp.WithArgument("who", mcp.RequiredArgument())), func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("a greeting", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("hello "+req.Params.Arguments["who"]))}), nil
	})
	s.AddResource(mcp.NewResource("doc://readme", "readme", mcp.WithMIMEType("text/plain")), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "the readme"}}, nil
	})
	s.AddResourceTemplate(mcp.NewResourceTemplate("doc://page/{n}", "page"), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: "page " + strings.TrimPrefix(req.Params.URI, "doc://page/")}}, nil
	})
	h := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(h.Close)

	p, _ := startProxy(t, h.URL, proxy.Config{Extract: true})
	c := connect(t, p.Server())
	ctx := t.Context()

	prompts, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	require.NoError(t, err)
	require.Len(t, prompts.Prompts, 1)
	assert.Equal(t, "greet", prompts.Prompts[0].Name)
	req := mcp.GetPromptRequest{}
	req.Params.Name = "greet"
	req.Params.Arguments = map[string]string{"who": "Ada"}
	got, err := c.GetPrompt(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "a greeting", got.Description)
	require.Len(t, got.Messages, 1)
	assert.Equal(t, "hello Ada", got.Messages[0].Content.(mcp.TextContent).Text)

	resources, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	require.NoError(t, err)
	require.Len(t, resources.Resources, 1)
	assert.Equal(t, "doc://readme", resources.Resources[0].URI)
	rreq := mcp.ReadResourceRequest{}
	rreq.Params.URI = "doc://readme"
	read, err := c.ReadResource(ctx, rreq)
	require.NoError(t, err)
	assert.Equal(t, "the readme", read.Contents[0].(mcp.TextResourceContents).Text)
	rreq.Params.URI = "doc://page/7"
	read, err = c.ReadResource(ctx, rreq)
	require.NoError(t, err)
	assert.Equal(t, "page 7", read.Contents[0].(mcp.TextResourceContents).Text)

	templates, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	require.NoError(t, err)
	var uris []string
	for _, tpl := range templates.ResourceTemplates {
		uris = append(uris, tpl.URITemplate.Raw())
	}
	assert.Contains(t, uris, "doc://page/{n}")
	assert.True(t, strings.HasPrefix(strings.Join(uris, " "), "lro://") || strings.Contains(strings.Join(uris, " "), "lro://"), "%v", uris)

	creq := mcp.CompleteRequest{}
	creq.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: "greet"}
	creq.Params.Argument = mcp.CompleteArgument{Name: "who", Value: "A"}
	comp, err := c.Complete(ctx, creq)
	require.NoError(t, err)
	assert.Equal(t, []string{"greet:A1", "greet:A2"}, comp.Completion.Values)
}

// TestRemoteProgressAndLogging: a remote's progress notifications reach
// the client that asked for them, its log messages reach the client, and
// the client's logging/setLevel reaches the remote.
func TestRemoteProgressAndLogging(t *testing.T) {
	levels := make(chan mcp.LoggingLevel, 1)
	hooks := &server.Hooks{}
	hooks.AddAfterSetLevel(func(_ context.Context, _ any, req *mcp.SetLevelRequest, _ *mcp.EmptyResult) {
		levels <- req.Params.Level
	})
	s := server.NewMCPServer("progress", "1.0.0", server.WithLogging(), server.WithHooks(hooks))
	s.AddTool(mcp.NewTool("slow"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv := server.ServerFromContext(ctx)
		if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
			for i := 1; i <= 2; i++ {
				_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{"progressToken": m.ProgressToken, "progress": i, "total": 2})
			}
		}
		_ = srv.SendNotificationToClient(ctx, "notifications/message", map[string]any{"level": "info", "data": "working"})
		// mcp-go's streamable HTTP server may drop the notifications of a
		// request still queued when its handler returns.
		time.Sleep(100 * time.Millisecond)
		return mcp.NewToolResultText("done"), nil
	})
	h := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(h.Close)
	p, _ := startProxy(t, h.URL, proxy.Config{ProtocolVersion: "2025-11-25"})
	c := connect(t, p.Server(), client.WithProtocolVersion("2025-11-25")) // logging/setLevel is gone from 2026-07-28
	notes := make(chan mcp.JSONRPCNotification, 10)
	c.OnNotification(func(n mcp.JSONRPCNotification) { notes <- n })

	req := mcp.CallToolRequest{}
	req.Params.Name = "slow"
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	res, err := c.CallTool(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Content[0].(mcp.TextContent).Text)
	var progress, messages int
	for deadline := time.After(5 * time.Second); progress < 2 || messages < 1; {
		select {
		case n := <-notes:
			switch n.Method {
			case "notifications/progress":
				progress++
				assert.Equal(t, "tok-1", n.Params.AdditionalFields["progressToken"])
			case "notifications/message":
				messages++
			}
		case <-deadline:
			t.Fatalf("progress notifications %d, log messages %d", progress, messages)
		}
	}

	lreq := mcp.SetLevelRequest{}
	lreq.Params.Level = mcp.LoggingLevelDebug
	require.NoError(t, c.SetLevel(t.Context(), lreq))
	select {
	case l := <-levels:
		assert.Equal(t, mcp.LoggingLevelDebug, l)
	case <-time.After(5 * time.Second):
		t.Fatal("the remote did not get logging/setLevel")
	}
}

// answers is a client that answers sampling, elicitation and roots.
type answers struct{}

func (answers) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	text := req.Messages[0].Content.(mcp.TextContent).Text
	return &mcp.CreateMessageResult{Model: "m", SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("sampled " + text)}}, nil
}

func (answers) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"ok": true}}}, nil
}

func (answers) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///root-of-the-client", Name: "r"}}}, nil
}

// TestRemoteRequestsToTheClient: the remote's sampling, elicitation and
// roots requests reach the proxy's client, and its answers the remote.
func TestRemoteRequestsToTheClient(t *testing.T) {
	s := server.NewMCPServer("asking", "1.0.0", server.WithElicitation())
	s.AddTool(mcp.NewTool("ask"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv := server.ServerFromContext(ctx)
		sreq := mcp.CreateMessageRequest{}
		sreq.Messages = []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("hello")}}
		sreq.MaxTokens = 10
		sampled, err := srv.RequestSampling(ctx, sreq)
		if err != nil {
			return mcp.NewToolResultError("sampling: " + err.Error()), nil
		}
		ereq := mcp.ElicitationRequest{}
		ereq.Params.Message = "ok?"
		ereq.Params.RequestedSchema = map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}
		elicited, err := srv.RequestElicitation(ctx, ereq)
		if err != nil {
			return mcp.NewToolResultError("elicitation: " + err.Error()), nil
		}
		roots, err := srv.RequestRoots(ctx, mcp.ListRootsRequest{})
		if err != nil {
			return mcp.NewToolResultError("roots: " + err.Error()), nil
		}
		return mcp.NewToolResultText(sampled.Content.(mcp.TextContent).Text + " / " + string(elicited.Action) + " / " + roots.Roots[0].URI), nil
	})
	h := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(h.Close)
	// Under 2026-07-28 a server asks through the input requests of its
	// result instead (mcp-go's client answers them with the same handlers).
	for _, version := range []string{"2025-11-25"} {
		t.Run("remote protocol "+version, func(t *testing.T) {
			p, _ := startProxy(t, h.URL, proxy.Config{ProtocolVersion: version})
			c := connect(t, p.Server(), client.WithProtocolVersion("2025-11-25"),
				client.WithSamplingHandler(answers{}), client.WithElicitationHandler(answers{}), client.WithRootsHandler(answers{}))
			res := callTool(t, c, "ask", nil)
			require.False(t, res.IsError, "%v", res.Content)
			assert.Equal(t, "sampled hello / accept / file:///root-of-the-client", res.Content[0].(mcp.TextContent).Text)
		})
	}
}

// bodyLog is an http.Handler that records the bodies of the POSTs to h.
type bodyLog struct {
	h      http.Handler
	mu     sync.Mutex
	bodies []string
}

func (l *bodyLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		l.mu.Lock()
		l.bodies = append(l.bodies, string(b))
		l.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	l.h.ServeHTTP(w, r)
}

// has reports whether a POST body held s.
func (l *bodyLog) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.bodies, func(b string) bool { return strings.Contains(b, s) })
}

// TestRemoteCancellation: a call that the client cancels, or that times
// out, is cancelled on the remote too (protocol 2025-11-25, where the end
// of the HTTP request does not say so).
func TestRemoteCancellation(t *testing.T) {
	t.Parallel() // it mostly waits (for the pacer, a timeout), and shares nothing
	stopped := make(chan string, 4)
	s := server.NewMCPServer("cancel", "1.0.0")
	s.AddTool(mcp.NewTool("wait"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
			stopped <- req.GetString("who", "")
			return nil, ctx.Err()
		case <-time.After(30 * time.Second):
			return mcp.NewToolResultText("waited"), nil
		}
	})
	log := &bodyLog{h: server.NewStreamableHTTPServer(s)}
	h := httptest.NewServer(log)
	t.Cleanup(h.Close)
	p, err := proxy.New(newOffloader(t, nil), proxy.Config{Remote: h.URL, ProtocolVersion: "2025-11-25", CallTimeout: 500 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	c := connect(t, p.Server())

	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	req := mcp.CallToolRequest{}
	req.Params.Name = "wait"
	req.Params.Arguments = map[string]any{"who": "client"}
	_, _ = c.CallTool(ctx, req)
	req.Params.Arguments = map[string]any{"who": "timeout"}
	res, err := c.CallTool(t.Context(), req)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	got := map[string]bool{}
	for deadline := time.After(5 * time.Second); len(got) < 2; {
		select {
		case who := <-stopped:
			got[who] = true
		case <-deadline:
			t.Fatalf("the remote's calls stopped: %v; want the client's and the timed out one", got)
		}
	}
	assert.True(t, log.has(`"notifications/cancelled"`), "no notifications/cancelled reached the remote")
}

// TestRemoteCapabilities: the proxy declares the remote's prompts,
// resources, completions and logging only when the remote does
// (resources also when the Offloader serves its own); and it speaks to the
// remote in the protocol pinned, or else in the client's generation: a
// client of 2025-11-25 gets 2025-11-25 upstream, one of 2026-07-28 gets
// 2026-07-28.
func TestRemoteCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []server.ServerOption
		want []string
	}{
		{"tools only", nil, nil},
		{"all", []server.ServerOption{server.WithPromptCapabilities(true), server.WithResourceCapabilities(false, true), server.WithCompletions(), server.WithLogging()},
			[]string{"prompts", "resources", "completions", "logging"}},
		{"prompts and logging", []server.ServerOption{server.WithPromptCapabilities(false), server.WithLogging()}, []string{"prompts", "logging"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := server.NewMCPServer("caps", "1.0.0", tc.opts...)
			s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("echo"), nil
			})
			var mu sync.Mutex
			spoken := map[string]string{} // the call's marker -> the protocol version it came in
			hs := server.NewStreamableHTTPServer(s)
			h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if i := bytes.Index(body, []byte(`"marker":"`)); i >= 0 {
					marker, _, _ := strings.Cut(string(body[i+len(`"marker":"`):]), `"`)
					mu.Lock()
					spoken[marker] = r.Header.Get("Mcp-Protocol-Version")
					mu.Unlock()
				}
				hs.ServeHTTP(w, r)
			}))
			t.Cleanup(h.Close)
			for _, pinned := range []string{"2025-11-25", ""} {
				for _, version := range []string{"2025-11-25", "2026-07-28"} {
					p, off := startProxy(t, h.URL, proxy.Config{ProtocolVersion: pinned})
					c, err := client.NewInProcessClientWithOptions(p.Server(), client.WithProtocolVersion(version))
					require.NoError(t, err)
					require.NoError(t, c.Start(t.Context()))
					t.Cleanup(func() { c.Close() })
					init, err := c.Initialize(t.Context(), mcp.InitializeRequest{})
					require.NoError(t, err)
					caps := init.Capabilities
					declared := map[string]bool{"prompts": caps.Prompts != nil, "resources": caps.Resources != nil, "completions": caps.Completions != nil, "logging": caps.Logging != nil}
					want := map[string]bool{"prompts": false, "resources": off.Host().ServesResources(), "completions": false, "logging": false}
					for _, name := range tc.want {
						want[name] = true
					}
					assert.Equal(t, want, declared, "remote protocol %q, client's %s", pinned, version)
					assert.NotNil(t, caps.Tools)

					marker := pinned + "/" + version
					res := callTool(t, c, "echo", map[string]any{"marker": marker})
					require.False(t, res.IsError, textOf(t, res, 0))
					upstream := cmp.Or(pinned, version)
					mu.Lock()
					assert.Equal(t, upstream, spoken[marker], "the protocol spoken to the remote, pinned %q, the client's %s", pinned, version)
					mu.Unlock()
				}
			}
		})
	}
}

// TestRemotePages: the client's listings of the remote's prompts,
// resources and resource templates come page by page, the remote's pages
// with its cursors, and the proxy's own templates on the last page.
func TestRemotePages(t *testing.T) {
	s := server.NewMCPServer("pages", "1.0.0", server.WithPaginationLimit(2), server.WithPromptCapabilities(true), server.WithResourceCapabilities(false, true))
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo"), nil
	})
	s.AddTool(mcp.NewTool("echo2"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo"), nil
	})
	s.AddTool(mcp.NewTool("echo3"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo"), nil
	})
	for i := range 5 {
		s.AddPrompt(mcp.NewPrompt(fmt.Sprintf("prompt-%d", i)), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("p", nil), nil
		})
		s.AddResource(mcp.NewResource(fmt.Sprintf("doc://%d", i), fmt.Sprintf("doc-%d", i)), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: "d"}}, nil
		})
		s.AddResourceTemplate(mcp.NewResourceTemplate(fmt.Sprintf("doc://t%d/{n}", i), fmt.Sprintf("tpl-%d", i)), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: "t"}}, nil
		})
	}
	h := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(h.Close)
	p, off := startProxy(t, h.URL, proxy.Config{Extract: true})
	c := connect(t, p.Server())
	ctx := t.Context()

	// pages follows the cursors of a listing and returns its pages' items.
	pages := func(list func(cursor mcp.Cursor) ([]string, mcp.Cursor, error)) [][]string {
		var out [][]string
		var cursor mcp.Cursor
		for range 10 {
			items, next, err := list(cursor)
			require.NoError(t, err)
			out = append(out, items)
			if next == "" {
				return out
			}
			cursor = next
		}
		t.Fatalf("more than 10 pages: %v", out)
		return nil
	}
	prompts := pages(func(cursor mcp.Cursor) ([]string, mcp.Cursor, error) {
		req := mcp.ListPromptsRequest{}
		req.Params.Cursor = cursor
		res, err := c.ListPromptsByPage(ctx, req)
		if err != nil {
			return nil, "", err
		}
		var names []string
		for _, pr := range res.Prompts {
			names = append(names, pr.Name)
		}
		return names, res.NextCursor, nil
	})
	assert.Equal(t, [][]string{{"prompt-0", "prompt-1"}, {"prompt-2", "prompt-3"}, {"prompt-4"}}, prompts)

	resources := pages(func(cursor mcp.Cursor) ([]string, mcp.Cursor, error) {
		req := mcp.ListResourcesRequest{}
		req.Params.Cursor = cursor
		res, err := c.ListResourcesByPage(ctx, req)
		if err != nil {
			return nil, "", err
		}
		var uris []string
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		return uris, res.NextCursor, nil
	})
	assert.Equal(t, [][]string{{"doc://0", "doc://1"}, {"doc://2", "doc://3"}, {"doc://4"}}, resources)

	templates := pages(func(cursor mcp.Cursor) ([]string, mcp.Cursor, error) {
		req := mcp.ListResourceTemplatesRequest{}
		req.Params.Cursor = cursor
		res, err := c.ListResourceTemplatesByPage(ctx, req)
		if err != nil {
			return nil, "", err
		}
		var uris []string
		for _, tpl := range res.ResourceTemplates {
			uris = append(uris, tpl.URITemplate.Raw())
		}
		return uris, res.NextCursor, nil
	})
	require.Len(t, templates, 3, "%v", templates)
	assert.Equal(t, []string{"doc://t0/{n}", "doc://t1/{n}"}, templates[0])
	assert.Equal(t, []string{"doc://t2/{n}", "doc://t3/{n}"}, templates[1])
	require.NotEmpty(t, templates[2])
	assert.Equal(t, "doc://t4/{n}", templates[2][0])
	own := templates[2][1:]
	if off.Host().ServesResources() {
		require.NotEmpty(t, own, "the proxy's own templates on the last page")
	}
	for _, u := range own {
		assert.True(t, strings.HasPrefix(u, "lro://"), "%s on the last page", u)
	}

	// The prompts of every page are served.
	req := mcp.GetPromptRequest{}
	req.Params.Name = "prompt-4"
	_, err := c.GetPrompt(ctx, req)
	require.NoError(t, err)
}

// TestRemoteHooksTakeAnyMessage: the proxy's hooks on the local server
// take the errors of every method, whatever its message (mcp-go passes a
// map for a notification it could not deliver).
func TestRemoteHooksTakeAnyMessage(t *testing.T) {
	s := server.NewMCPServer("hooks", "1.0.0")
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo"), nil
	})
	h := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(h.Close)
	p, _ := startProxy(t, h.URL, proxy.Config{})
	for _, f := range p.Server().GetHooks().OnError {
		assert.NotPanics(t, func() {
			f(t.Context(), nil, "notifications/message", map[string]any{"level": "info"}, errors.New("blocked"))
		})
	}
}

// waitingSampler is a client whose sampling handler waits until its
// request is cancelled, and says so.
type waitingSampler struct{ cancelled chan struct{} }

func (s waitingSampler) CreateMessage(ctx context.Context, _ mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	select {
	case <-ctx.Done():
		close(s.cancelled)
		return nil, ctx.Err()
	case <-time.After(20 * time.Second):
		return nil, errors.New("never cancelled")
	}
}

// TestRemoteCancelsItsRequest: when the remote cancels a request it sent
// to the client (the official SDK sends notifications/cancelled when the
// context of its sampling call ends), the proxy's request to the client is
// cancelled too.
func TestRemoteCancelsItsRequest(t *testing.T) {
	sampler := waitingSampler{cancelled: make(chan struct{})}
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "asking", Version: "1"}, nil)
	sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "ask"}, func(ctx context.Context, req *sdkmcp.CallToolRequest, _ struct{}) (*sdkmcp.CallToolResult, any, error) {
		ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err := req.Session.CreateMessage(ctx, &sdkmcp.CreateMessageParams{MaxTokens: 5, Messages: []*sdkmcp.SamplingMessage{{Role: "user", Content: &sdkmcp.TextContent{Text: "hi"}}}})
		// The call goes on until the client's request is cancelled: only
		// the notification can tell the proxy, not the end of the call's
		// stream.
		select {
		case <-sampler.cancelled:
		case <-time.After(20 * time.Second):
		}
		return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: fmt.Sprint("sampling: ", err)}}}, nil, nil
	})
	h := httptest.NewServer(sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return s }, nil))
	t.Cleanup(h.Close)
	p, _ := startProxy(t, h.URL, proxy.Config{ProtocolVersion: "2025-11-25"})
	c := connect(t, p.Server(), client.WithProtocolVersion("2025-11-25"), client.WithSamplingHandler(sampler))
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- callTool(t, c, "ask", nil) }()
	select {
	case <-sampler.cancelled:
	case <-time.After(20 * time.Second): // liveness, not a bound: a loaded machine is slow
		t.Fatal("the client's sampling request was not cancelled when the remote cancelled its own")
	}
	select {
	case res := <-done:
		assert.Contains(t, res.Content[0].(mcp.TextContent).Text, "sampling: ")
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end")
	}
}
