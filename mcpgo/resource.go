package mcpgo

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/extract"
)

// AddResources registers on s the resource templates of offloaded files
// (see [lro.Host.ServeResources]): clients read a file, or a range of its
// lines, with resources/read, wherever their disk is, and offloaded
// results carry a resource link to their file. Registering a template
// makes s declare the resources capability. With
// [lro.WithoutResourceLinks] it does nothing.
//
// Under protocol 2026-07-28, s's resources/templates/list then carries
// the cache hints of a listing of lro's templates, cacheScope "private"
// and ttlMs 0 (see [host.ListingTTLMs]), in place of those s was given
// for it with server.WithCacheHints or server.WithMethodCacheHints before
// AddResources (mcp-go's default is private and 0 too).
func AddResources(s *server.MCPServer, off *lro.Offloader) {
	read := func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return readResource(ctx, off, req)
	}
	tmpls := off.Host().ServeResources()
	if len(tmpls) > 0 {
		// mcp-go sends method hints under 2026-07-28 only, where the
		// fields exist.
		server.WithMethodCacheHints(mcp.MethodResourcesTemplatesList, host.ListingTTLMs, host.CacheScopePrivate)(s)
	}
	for _, t := range tmpls {
		opts := []mcp.ResourceTemplateOption{mcp.WithTemplateDescription(t.Description)}
		if t.MIMEType != "" {
			opts = append(opts, mcp.WithTemplateMIMEType(t.MIMEType))
		}
		s.AddResourceTemplate(mcp.NewResourceTemplate(t.URITemplate, t.Name, opts...), read)
	}
}

// readResource answers resources/read on an mcp-go server. mcp-go v1.2.1
// answers every error of a resource handler as an internal error (-32603;
// server/handler_errors.go): unlike the official SDK's adapter, which
// answers [lro.ErrResourceTooLarge] as invalid params (-32602) and
// [lro.ErrResourceNotFound] as resource not found, this one cannot choose
// the code, and the message alone says which error it is.
func readResource(ctx context.Context, off *lro.Offloader, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	if srv := server.ServerFromContext(ctx); srv != nil {
		// The too-large error names lro_extract plainly when s has it.
		ctx = extract.WithNative(ctx, srv.GetTool(lro.ExtractToolName) != nil)
	}
	c, err := off.Host().ReadResource(withSession(ctx), req.Params.URI)
	if err != nil {
		return nil, err
	}
	if st := stateOf(off); st.hooked.Load() {
		st.expiries.Store(req.Params.URI, c.Expires) // for cacheHints
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}}, nil
}

// cacheHints gives a resources/read result of an offloaded file, under
// protocol 2026-07-28, cacheScope "private" and ttlMs the time to the
// file's expiry (SEP-2549): mcp-go's default ttlMs is 0.
func cacheHints(ctx context.Context, st *state, req *mcp.ReadResourceRequest, res *mcp.ReadResourceResult) {
	if req == nil || res == nil {
		return
	}
	v, ok := st.expiries.LoadAndDelete(req.Params.URI)
	if !ok {
		return
	}
	if info := server.RequestProtocolInfoFromContext(ctx); info == nil || !info.Modern {
		return // the fields are those of 2026-07-28
	}
	res.SetCacheHints(host.ResourceContents{Expires: v.(time.Time)}.TTLMs(time.Now()), mcp.CacheScopePrivate)
}
