package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/mcpgo"
)

// The remote's tool listing: listed page by page, bounded by
// MaxToolsBytes, served by the front server with the schemas as the remote
// sent them, relisted when the remote announces a change (paced), and the
// connection retired when mcp-go's client has kept too many definitions.

// refusedListing returns the error of the last listing when it was
// refused and nothing of the remote is served, or nil.
func (p *Proxy) refusedListing() error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if p.refused != nil && len(p.served) == 0 {
		return fmt.Errorf("lro: proxy: the remote %s: %w (Config.MaxToolsBytes; lro-proxy -max-tools-bytes)", p.cfg.Remote, p.refused)
	}
	return nil
}

// requestResync asks syncLoop for a new tool list; a burst of
// notifications costs one listing.
func (p *Proxy) requestResync() {
	select {
	case p.resync <- struct{}{}:
	default:
	}
}

func (p *Proxy) syncLoop() {
	defer p.done.Done()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.resync:
		}
		p.mu.Lock()
		c, tr := p.up, p.tr
		p.mu.Unlock()
		if c == nil {
			continue // the next connection lists the tools anyway
		}
		ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
		if err := p.syncTools(ctx, c, tr, true); err != nil {
			p.log.Warn("lro proxy: relisting tools", "error", err)
		}
		cancel()
	}
}

// syncTools serves the remote's tools, with their schemas exactly as the
// remote sent them, alongside the proxy's own tools. Syncs are serialized,
// so an older listing never overwrites a newer one. A paced sync (one the
// remote asked for, by announcing a change, or the older protocol's
// periodic one) starts at least minResync after the last sync, so a remote
// that announces changes without pause is listed (and its clients
// notified) at most once in it; it waits before it takes its turn, and
// lists only if c is still the connection, so the sync of a new
// connection is not delayed, and the watcher paces reconnections. Only a
// change
// touches the front server, in one call, so clients get one
// tools/list_changed per change and none for a listing that changed
// nothing (a reconnection). A listing larger than MaxToolsBytes is
// refused: the error is logged, the listing served so far stays, and
// syncTools returns nil (the connection is fine).
func (p *Proxy) syncTools(ctx context.Context, c *client.Client, tr *proxyTransport, paced bool) error {
	if paced {
		if err := p.pace.wait(ctx); err != nil {
			return err
		}
	}
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if paced {
		p.mu.Lock()
		current := p.up == c
		p.mu.Unlock()
		if !current {
			return nil // replaced meanwhile: the new connection listed
		}
	} else {
		p.pace.mark()
	}
	pages, err := p.listTools(ctx, c, tr)
	if err == nil {
		err = p.applyListing(pages)
	}
	if err == nil {
		if ferr := p.syncFeatures(ctx, c); ferr != nil {
			p.log.Warn("lro proxy: listing the remote's prompts and resources", "remote", p.cfg.Remote, "error", proxyClip(ferr.Error(), p.lim.errText))
		}
	}
	var lim *RemoteLimitError
	if errors.As(err, &lim) {
		if p.refused == nil {
			p.log.Error("lro proxy: the remote's tool listing is too large; the proxy keeps serving the tools it had (raise Config.MaxToolsBytes, lro-proxy -max-tools-bytes)",
				"remote", p.cfg.Remote, "error", lim, "served", len(p.served))
		}
		p.refused = lim
		return nil
	}
	return err
}

// applyListing serves the tools of pages, the tools/list results of one
// listing as the remote sent them, in place of the remote tools served so
// far: the tools that changed are added or replaced, those gone deleted.
// Each tool keeps its schemas as the remote sent them (mcp.Tool drops what
// it does not model), but for the output schema of a tool whose results
// are offloaded, widened to admit the descriptor (see MemoryToolsOnly). A tool without a name, one mcp-go would refuse, or
// the remote's lro_extract when the proxy serves its own, is not served.
// Pages larger together than MaxToolsBytes, or that are not tools/list
// results, are refused with an error, and what was served stays. The
// caller holds syncMu.
func (p *Proxy) applyListing(pages []json.RawMessage) error {
	var size int64
	for _, page := range pages {
		size += int64(len(page))
	}
	if lim := p.overTools(size); lim != nil {
		return lim
	}
	var tools []mcp.Tool
	raws := map[string]json.RawMessage{}
	for _, page := range pages {
		// Decoded as mcp-go's client decodes it, and again for the JSON
		// of each tool.
		var res mcp.ListToolsResult
		if err := json.Unmarshal(page, &res); err != nil {
			return fmt.Errorf("lro: proxy: the remote's tools/list result: %w", err)
		}
		var raw struct {
			Tools []json.RawMessage `json:"tools"`
		}
		_ = json.Unmarshal(page, &raw)
		for _, t := range raw.Tools {
			var named struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(t, &named) == nil {
				raws[named.Name] = t
			}
		}
		tools = append(tools, res.Tools...)
	}
	next := make(map[string]string, len(tools))
	var order []string
	changed := map[string]server.ServerTool{}
	for _, t := range tools {
		switch {
		case t.Name == "":
			p.warnOnce("tool without name", "lro proxy: the remote lists a tool without a name; it is not served")
			continue
		case t.Name == lro.ExtractToolName && p.cfg.Extract:
			p.warnOnce("hidden "+lro.ExtractToolName, "lro proxy: the remote's own lro_extract is hidden by the local one")
			continue
		}
		raw := raws[t.Name]
		var schemas struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if raw != nil && json.Unmarshal(raw, &schemas) == nil {
			t.InputSchema, t.RawInputSchema = mcp.ToolInputSchema{}, schemas.InputSchema
			t.OutputSchema, t.RawOutputSchema = mcp.ToolOutputSchema{}, schemas.OutputSchema
		}
		// mcp-go's AddTools panics on these: the remote's mistake must not
		// stop the proxy.
		if err := mcp.ValidateParamHeaderAnnotations(&t); err != nil {
			p.warnOnce("invalid tool "+t.Name, "lro proxy: a remote tool is not served", "tool", t.Name, "error", err)
			continue
		}
		if raw == nil {
			raw, _ = json.Marshal(t)
		}
		next[t.Name] = string(raw)
		order = append(order, t.Name)
		if p.served[t.Name] != string(raw) {
			if p.generic(t.Name) {
				t = mcpgo.WidenTool(p.off, t)
			}
			changed[t.Name] = server.ServerTool{Tool: t, Handler: p.toolHandler(t.Name)}
		}
	}
	var gone []string
	for name := range p.served {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if err := p.serve(changed, gone); err != nil {
		return err
	}
	p.served, p.order, p.refused = next, order, nil
	return nil
}

// maxListPages bounds the pages of one listing, however small.
const maxListPages = 10_000

// listTools lists the remote's tools, page by page, and returns the
// tools/list results as the remote sent them. It stops with a
// *RemoteLimitError once they are larger together than MaxToolsBytes, and
// retires the connection once its client has kept (from this and earlier
// listings) more than twice that.
func (p *Proxy) listTools(ctx context.Context, c *client.Client, tr *proxyTransport) ([]json.RawMessage, error) {
	var pages []json.RawMessage
	var size int64
	seen := map[mcp.Cursor]bool{}
	req := mcp.ListToolsRequest{}
	defer func() {
		if p.lim.tools > 0 && tr.remember(nil) > 2*p.lim.tools {
			p.retire(c, tr)
		}
	}()
	for {
		page := &listPage{}
		res, err := c.ListToolsByPage(context.WithValue(ctx, listPageKey{}, page), req)
		if err != nil {
			return nil, err
		}
		tr.remember(res.Tools) // what mcp-go's client now keeps
		if page.result == nil {
			page.result, _ = json.Marshal(res) // not seen by the transport: cannot happen
		}
		size += int64(len(page.result))
		if lim := p.overTools(size); lim != nil {
			return nil, lim
		}
		pages = append(pages, page.result)
		switch {
		case res.NextCursor == "":
			return pages, nil
		case seen[res.NextCursor]:
			return nil, fmt.Errorf("lro: proxy: the remote's tool listing repeats the cursor %.100q", res.NextCursor)
		case len(pages) >= maxListPages:
			return nil, fmt.Errorf("lro: proxy: the remote's tool listing has more than %d pages", maxListPages)
		}
		seen[res.NextCursor] = true
		req.Params.Cursor = res.NextCursor
	}
}

// retire replaces the connection c: new calls and listings go to a new
// one, and c is closed once its calls in flight have ended. mcp-go's client
// keeps every tool it has ever listed; a remote that renames its tools
// would otherwise grow it without bound.
func (p *Proxy) retire(c *client.Client, tr *proxyTransport) {
	p.mu.Lock()
	if p.up == c {
		p.up = nil
	}
	p.mu.Unlock()
	p.retired++
	p.log.Info("lro proxy: replacing the connection to the remote, whose client kept too many tool definitions", "remote", p.cfg.Remote)
	tr.retire()
}

// serve adds (or replaces) the changed tools and deletes the gone ones,
// with one notification to the clients whatever the change.
func (p *Proxy) serve(changed map[string]server.ServerTool, gone []string) (err error) {
	// AddTools and SetTools panic on a name taken by a task tool of the
	// front server's owner: report it instead.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("lro: proxy: serving the remote's tools: %v", r)
		}
	}()
	add := slices.Collect(maps.Values(changed))
	switch {
	case len(gone) > 0 && len(add) > 0:
		// DeleteTools and AddTools would notify once each. SetTools
		// replaces them all: the proxy's own tools (and any its owner
		// added) are carried over.
		all := p.front.ListTools()
		for _, name := range gone {
			delete(all, name)
		}
		set := add
		for name, t := range all {
			if _, ok := changed[name]; !ok {
				set = append(set, *t)
			}
		}
		p.front.SetTools(set...)
	case len(gone) > 0:
		p.front.DeleteTools(gone...)
	case len(add) > 0:
		p.front.AddTools(add...)
	}
	return nil
}
