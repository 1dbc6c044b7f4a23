package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A remote's prompts, resources, resource templates, completions and log
// messages, beside its tools. The remote is spoken to with mcp-go's typed
// client, so they are served by the local mcp-go server as the remote
// lists them (all pages of a listing together; the client gets them page
// by page, see passPages), and each prompts/get,
// resources/read and completion/complete is forwarded. Listings follow
// the remote's list-changed notifications, paced with the tool listing;
// its log messages and resource updates go to the clients as they come.
// Progress notifications of a call reach the client (its progress token
// goes with the call), its logging/setLevel reaches the remote, and so
// does its cancellation of a call (see proxyTransport.cancelled). The
// client is told of the remote's prompts, resources, completions and
// logging as the remote declares them (see declareCapabilities). The
// remote's requests to the client (sampling/createMessage,
// elicitation/create, roots/list) go to the client connected to the
// proxy (until the remote cancels it: see proxyTransport.SetRequestHandler):
// the proxy declares the three capabilities to the remote, and a
// request the client cannot answer gets the client's error, or one that
// says no client is connected.

// remoteOptions are the local server's options for what a remote may
// have besides tools.
func (p *Proxy) remoteOptions() []server.ServerOption {
	return []server.ServerOption{
		server.WithPromptCapabilities(true),
		server.WithResourceCapabilities(false, true),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(remoteCompletions{p}),
		server.WithResourceCompletionProvider(remoteCompletions{p}),
		server.WithLogging(),
	}
}

// declareCapabilities has the proxy declare to its client the remote's
// prompts, resources, completions and logging as the remote declares
// them. The local server is built with all four, since the remote may
// not be reached before the client starts; each is taken out of the
// client's initialize (or server/discover) result when the connected
// remote does not declare it. Resources stay when the Offloader serves
// its own (the lro:// templates). A client that starts while the remote
// is down is told all four, as before the remote was known.
func (p *Proxy) declareCapabilities() {
	h := p.hooks()
	h.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		p.asRemote(&res.Capabilities)
	})
	h.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		p.asRemote(&res.Capabilities)
	})
}

// asRemote takes out of caps what the connected remote does not declare
// (see declareCapabilities).
func (p *Proxy) asRemote(caps *mcp.ServerCapabilities) {
	p.mu.Lock()
	c := p.up
	p.mu.Unlock()
	if c == nil {
		return
	}
	remote := c.GetServerCapabilities()
	if remote.Prompts == nil {
		caps.Prompts = nil
	}
	if remote.Resources == nil && !p.off.Host().ServesResources() {
		caps.Resources = nil
	}
	if remote.Completions == nil {
		caps.Completions = nil
	}
	if remote.Logging == nil {
		caps.Logging = nil
	}
}

// hooks returns the local server's hooks, adding them when it has none.
func (p *Proxy) hooks() *server.Hooks {
	h := p.front.GetHooks()
	if h == nil {
		h = &server.Hooks{}
		server.WithHooks(h)(p.front)
	}
	return h
}

// remoteNotification passes a notification of the remote on: log messages
// and resource updates to the clients, list changes to a new listing.
// The client of a Serve gets it as mcp-go decoded it, _meta and all (a
// cut notification's mark, see notify.go), on its output; the clients of
// Server, through the local server, which sends no _meta.
func (p *Proxy) remoteNotification(n mcp.JSONRPCNotification) {
	switch n.Method {
	case "notifications/message", mcp.MethodNotificationResourceUpdated, string(mcp.MethodNotificationProgress):
		if p.relayNotification(n) {
			return
		}
		if p.front != nil {
			p.front.SendNotificationToAllClients(n.Method, n.Params.AdditionalFields)
		}
	case mcp.MethodNotificationPromptsListChanged, mcp.MethodNotificationResourcesListChanged:
		p.requestResync()
	}
}

// relayNotification writes n to the client of the Serve in progress, if
// any, and reports whether it did. It is written at once, before the
// answer to the call it belongs to, which comes after it on the remote's
// stream: the local server's notifications go out on a goroutine of
// their own, and the last of a call's log or progress notifications
// passed to it came after the call's answer at times, where a client that
// has its answer no longer reads them.
func (p *Proxy) relayNotification(n mcp.JSONRPCNotification) bool {
	p.relayMu.Lock()
	rr := p.relay
	p.relayMu.Unlock()
	if rr == nil {
		return false
	}
	if len(n.Params.Meta) == 0 {
		// mcp-go decodes a notification without _meta to an empty one,
		// which it would encode: the client gets what the remote sent.
		n.Params.Meta = nil
	}
	b, err := json.Marshal(n)
	if err != nil {
		return false
	}
	rr.out.writeLine(b)
	return true
}

// trackClient keeps the local server's client session, which answers the
// remote's requests.
func (p *Proxy) trackClient() {
	h := p.hooks()
	h.AddOnRegisterSession(func(_ context.Context, s server.ClientSession) {
		p.sessMu.Lock()
		p.sess = s
		p.sessMu.Unlock()
	})
	h.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		p.sessMu.Lock()
		if p.sess == s {
			p.sess = nil
		}
		p.sessMu.Unlock()
	})
}

// clientContext returns ctx with the client session that answers the
// remote's requests.
func (p *Proxy) clientContext(ctx context.Context) (context.Context, error) {
	p.sessMu.Lock()
	s := p.sess
	p.sessMu.Unlock()
	if s == nil {
		return nil, errors.New("lro: proxy: no client is connected to the proxy to answer the remote's request")
	}
	return p.front.WithContext(ctx, s), nil
}

// remoteRequests answers the remote's requests to the client by asking
// the proxy's client.
type remoteRequests struct{ p *Proxy }

// CreateMessage asks the client (sampling/createMessage).
func (r remoteRequests) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	ctx, err := r.p.clientContext(ctx)
	if err != nil {
		return nil, err
	}
	if err := typedAsk(ctx, r.p, string(mcp.MethodSamplingCreateMessage), &req.CreateMessageParams); err != nil {
		return nil, err
	}
	//lint:ignore SA1019 the remote's sampling request, which its protocol may still have, relayed
	return r.p.front.RequestSampling(ctx, req)
}

// Elicit asks the client (elicitation/create).
func (r remoteRequests) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	ctx, err := r.p.clientContext(ctx)
	if err != nil {
		return nil, err
	}
	if err := typedAsk(ctx, r.p, string(mcp.MethodElicitationCreate), &req.Params); err != nil {
		return nil, err
	}
	return r.p.front.RequestElicitation(ctx, req)
}

// ListRoots asks the client (roots/list).
func (r remoteRequests) ListRoots(ctx context.Context, req mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	ctx, err := r.p.clientContext(ctx)
	if err != nil {
		return nil, err
	}
	return r.p.front.RequestRoots(ctx, req)
}

// forwardSetLevel passes the client's logging/setLevel on to the remote.
func (p *Proxy) forwardSetLevel() {
	h := p.hooks()
	h.AddAfterSetLevel(func(ctx context.Context, _ any, req *mcp.SetLevelRequest, _ *mcp.EmptyResult) {
		c, ctx, cancel, err := p.upstreamClient(context.WithoutCancel(ctx))
		if err != nil {
			return
		}
		defer cancel()
		//lint:ignore SA1019 the client's logging/setLevel, which the remote's protocol may still have, relayed
		if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: req.Params}); err != nil {
			p.log.Warn("lro proxy: the remote refused logging/setLevel", "remote", p.cfg.Remote, "error", proxyClip(err.Error(), p.lim.errText))
		}
	})
}

// syncFeatures serves the remote's prompts, resources and resource
// templates, when it declares them. The caller holds syncMu.
func (p *Proxy) syncFeatures(ctx context.Context, c *client.Client) error {
	caps := c.GetServerCapabilities()
	if caps.Prompts != nil {
		res, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
		if err != nil {
			return fmt.Errorf("lro: proxy: listing the remote's prompts: %w", err)
		}
		if p.features.changed("prompts", res.Prompts) {
			prompts := make([]server.ServerPrompt, 0, len(res.Prompts))
			for _, pr := range res.Prompts {
				prompts = append(prompts, server.ServerPrompt{Prompt: pr, Handler: p.forwardPrompt})
			}
			p.front.SetPrompts(prompts...)
		}
	}
	if caps.Resources == nil {
		return nil
	}
	res, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		return fmt.Errorf("lro: proxy: listing the remote's resources: %w", err)
	}
	if p.features.changed("resources", res.Resources) {
		resources := make([]server.ServerResource, 0, len(res.Resources))
		uris := make(map[string]bool, len(res.Resources))
		for _, r := range res.Resources {
			resources = append(resources, server.ServerResource{Resource: r, Handler: p.forwardRead})
			uris[r.URI] = true
		}
		p.front.SetResources(resources...)
		p.servedFor("resources", uris)
	}
	tres, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		return fmt.Errorf("lro: proxy: listing the remote's resource templates: %w", err)
	}
	templates := make([]server.ServerResourceTemplate, 0, len(tres.ResourceTemplates))
	uris := make(map[string]bool, len(tres.ResourceTemplates))
	for _, t := range tres.ResourceTemplates {
		templates = append(templates, server.ServerResourceTemplate{Template: t, Handler: p.forwardRead})
		uris[t.URITemplate.Raw()] = true
	}
	if len(templates) > 0 && p.features.changed("templates", tres.ResourceTemplates) {
		p.front.AddResourceTemplates(templates...)
		p.servedFor("templates", uris)
	}
	return nil
}

// listings remembers the last listings served, by kind, so that only a
// change touches the local server (and notifies its clients).
type listings map[string]string

// changed reports whether items differ from the last listing of kind, and
// remembers them.
func (l *listings) changed(kind string, items any) bool {
	b, err := json.Marshal(items)
	if err != nil {
		return true
	}
	if *l == nil {
		*l = listings{}
	}
	if (*l)[kind] == string(b) {
		return false
	}
	(*l)[kind] = string(b)
	return true
}

// upstreamClient returns the connection for a forwarded request, with the
// request's deadline.
func (p *Proxy) upstreamClient(ctx context.Context) (*client.Client, context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	c, err := p.connect(ctx)
	if err != nil {
		cancel()
		return nil, nil, nil, fmt.Errorf("lro: proxy: the remote %s: %w", p.cfg.Remote, err)
	}
	return c, ctx, cancel, nil
}

func (p *Proxy) forwardPrompt(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	c, ctx, cancel, err := p.upstreamClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	fwd := mcp.GetPromptRequest{Params: req.Params}
	res, err := c.GetPrompt(ctx, fwd)
	if err != nil {
		return nil, p.clipError(err)
	}
	return typedBound(ctx, p, string(mcp.MethodPromptsGet), req.Params, res, mcp.ParseGetPromptResult)
}

func (p *Proxy) forwardRead(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	c, ctx, cancel, err := p.upstreamClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	res, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: req.Params})
	if err != nil {
		return nil, p.clipError(err)
	}
	if res, err = typedBound(ctx, p, string(mcp.MethodResourcesRead), req.Params, res, mcp.ParseReadResourceResult); err != nil {
		return nil, err
	}
	return res.Contents, nil
}

// remoteCompletions forwards completion/complete to the remote.
type remoteCompletions struct{ p *Proxy }

func (r remoteCompletions) complete(ctx context.Context, ref any, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	c, ctx, cancel, err := r.p.upstreamClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	res, err := c.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{Ref: ref, Argument: arg, Context: cc}})
	if err != nil {
		return nil, err
	}
	return &res.Completion, nil
}

// CompletePromptArgument asks the remote.
func (r remoteCompletions) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return r.complete(ctx, mcp.PromptReference{Type: "ref/prompt", Name: name}, arg, cc)
}

// CompleteResourceArgument asks the remote.
func (r remoteCompletions) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return r.complete(ctx, mcp.ResourceReference{Type: "ref/resource", URI: uri}, arg, cc)
}

// servedFor notes the URIs of the resources or templates (kind) served
// for the remote.
func (p *Proxy) servedFor(kind string, uris map[string]bool) {
	p.pagesMu.Lock()
	defer p.pagesMu.Unlock()
	if p.remoteFor == nil {
		p.remoteFor = map[string]map[string]bool{}
	}
	if kind == "templates" {
		// Added to the local server, never taken away: those of earlier
		// listings are still served.
		for u := range p.remoteFor[kind] {
			uris[u] = true
		}
	}
	p.remoteFor[kind] = uris
}

// passPages has the client's listings of prompts, resources and resource
// templates go to the remote page by page, its cursors passed through,
// as a local server's are. The local server still holds the remote's
// whole listing (to route prompts/get and resources/read, and to answer
// while the remote is away), so its own answer is replaced in an after
// hook: the before hook takes the client's cursor, which the local
// server would read as one of its own, and the after hook answers with
// the remote's page at it, with the proxy's own resources and templates
// (lro://) on the last page. When the remote cannot be asked, the client
// gets the local listing whole, without a cursor.
func (p *Proxy) passPages() {
	h := p.hooks()
	take := func(req any, cursor *mcp.Cursor) {
		p.pagesMu.Lock()
		defer p.pagesMu.Unlock()
		if p.cursors == nil {
			p.cursors = map[any]mcp.Cursor{}
		}
		p.cursors[req] = *cursor
		*cursor = ""
	}
	h.AddBeforeListPrompts(func(_ context.Context, _ any, req *mcp.ListPromptsRequest) { take(req, &req.Params.Cursor) })
	h.AddBeforeListResources(func(_ context.Context, _ any, req *mcp.ListResourcesRequest) { take(req, &req.Params.Cursor) })
	h.AddBeforeListResourceTemplates(func(_ context.Context, _ any, req *mcp.ListResourceTemplatesRequest) {
		take(req, &req.Params.Cursor)
	})
	h.AddOnError(func(_ context.Context, _ any, _ mcp.MCPMethod, req any, _ error) {
		switch req.(type) {
		case *mcp.ListPromptsRequest, *mcp.ListResourcesRequest, *mcp.ListResourceTemplatesRequest:
			p.cursorOf(req) // forgotten; other requests may not be map keys at all
		}
	})

	h.AddAfterListPrompts(func(ctx context.Context, _ any, req *mcp.ListPromptsRequest, res *mcp.ListPromptsResult) {
		cursor := p.cursorOf(req)
		p.remotePage(ctx, "prompts", func(ctx context.Context, c *client.Client) error {
			page, err := c.ListPromptsByPage(ctx, mcp.ListPromptsRequest{PaginatedRequest: mcp.PaginatedRequest{Params: mcp.PaginatedParams{Cursor: cursor}}})
			if err == nil {
				res.Prompts, res.NextCursor = nonNil(page.Prompts), page.NextCursor
			}
			return err
		})
	})
	h.AddAfterListResources(func(ctx context.Context, _ any, req *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		cursor := p.cursorOf(req)
		p.remotePage(ctx, "resources", func(ctx context.Context, c *client.Client) error {
			page, err := c.ListResourcesByPage(ctx, mcp.ListResourcesRequest{PaginatedRequest: mcp.PaginatedRequest{Params: mcp.PaginatedParams{Cursor: cursor}}})
			if err == nil {
				res.Resources = withOwn(p, "resources", page.Resources, page.NextCursor, res.Resources, func(r mcp.Resource) string { return r.URI })
				res.NextCursor = page.NextCursor
			}
			return err
		})
	})
	h.AddAfterListResourceTemplates(func(ctx context.Context, _ any, req *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
		cursor := p.cursorOf(req)
		p.remotePage(ctx, "resources", func(ctx context.Context, c *client.Client) error {
			page, err := c.ListResourceTemplatesByPage(ctx, mcp.ListResourceTemplatesRequest{PaginatedRequest: mcp.PaginatedRequest{Params: mcp.PaginatedParams{Cursor: cursor}}})
			if err == nil {
				res.ResourceTemplates = withOwn(p, "templates", page.ResourceTemplates, page.NextCursor, res.ResourceTemplates, func(t mcp.ResourceTemplate) string { return t.URITemplate.Raw() })
				res.NextCursor = page.NextCursor
			}
			return err
		})
	})
}

// cursorOf returns the client's cursor that passPages took from req.
func (p *Proxy) cursorOf(req any) mcp.Cursor {
	p.pagesMu.Lock()
	defer p.pagesMu.Unlock()
	cursor := p.cursors[req]
	delete(p.cursors, req)
	return cursor
}

// remotePage asks the remote for a page of a listing of the capability
// kind, with list, when the remote declares it. On failure the client gets
// the local listing whole.
func (p *Proxy) remotePage(ctx context.Context, kind string, list func(context.Context, *client.Client) error) {
	p.mu.Lock()
	c := p.up
	p.mu.Unlock()
	if c == nil {
		return
	}
	caps := c.GetServerCapabilities()
	if kind == "prompts" && caps.Prompts == nil || kind == "resources" && caps.Resources == nil {
		return // the proxy's own resources only
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	defer cancel()
	if err := list(ctx, c); err != nil {
		p.log.Warn("lro proxy: listing a page of the remote's "+kind+"; the client gets the listing the proxy holds", "remote", p.cfg.Remote, "error", proxyClip(err.Error(), p.lim.errText))
	}
}

// withOwn returns page, a page of the remote's listing of kind, and on
// the last one (next is empty) the proxy's own items of local, the local
// server's listing: those the remote did not list.
func withOwn[T any](p *Proxy, kind string, page []T, next mcp.Cursor, local []T, uri func(T) string) []T {
	if next == "" {
		page = append(page, ownItems(p, kind, local, uri)...)
	}
	return nonNil(page)
}

// ownItems returns the items of the local server's listing that are not
// served for the remote: the proxy's own (the lro:// templates).
func ownItems[T any](p *Proxy, kind string, items []T, uri func(T) string) []T {
	p.pagesMu.Lock()
	defer p.pagesMu.Unlock()
	var own []T
	for _, it := range items {
		if !p.remoteFor[kind][uri(it)] {
			own = append(own, it)
		}
	}
	return own
}

// nonNil returns s, or an empty slice for nil: a listing's items are a
// required array, and nil would go out as null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
