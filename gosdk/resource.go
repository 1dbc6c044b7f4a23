package gosdk

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddResources registers on s the resource templates of offloaded files,
// as mcpgo.AddResources does on an mcp-go server: clients read a
// file, or a range of its lines, with resources/read, wherever their disk
// is, and offloaded results carry a resource link to their file.
// Registering a template makes s declare the resources capability. With
// [lro.WithoutResourceLinks] it does nothing.
//
// s's resources/templates/list then carries the cache hints of a listing
// of lro's templates, cacheScope "private" and ttlMs 0 (see
// [host.ListingTTLMs]), whatever ServerOptions.SetCacheable decided for
// it; the SDK's default is public.
func AddResources(s *mcp.Server, off *lro.Offloader) {
	tmpls := off.Host().ServeResources()
	if len(tmpls) > 0 {
		s.AddReceivingMiddleware(listingHints)
	}
	for _, t := range tmpls {
		s.AddResourceTemplate(&mcp.ResourceTemplate{
			URITemplate: t.URITemplate,
			Name:        t.Name,
			Description: t.Description,
			MIMEType:    t.MIMEType,
		}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return readResource(ctx, off, req)
		})
	}
}

// listingHints gives every page of resources/templates/list the cache
// hints of a listing of lro's templates. The SDK writes both fields at
// every protocol version (they are not omitted when empty), so they are
// set at every version, as a read's are: nothing is added before
// 2026-07-28 that the SDK did not write.
func listingHints(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if l, ok := res.(*mcp.ListResourceTemplatesResult); ok && err == nil {
			l.Cacheable = mcp.Cacheable{CacheScope: host.CacheScopePrivate, TTLMs: host.ListingTTLMs}
		}
		return res, err
	}
}

func readResource(ctx context.Context, off *lro.Offloader, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := ""
	if req.Params != nil {
		uri = req.Params.URI
	}
	c, err := off.Host().ReadResource(withSession(ctx, req.Session), uri)
	switch {
	case errors.Is(err, lro.ErrResourceNotFound):
		// The SDK's code for a resource not found, with the message
		// saying why (ResourceNotFoundError's is only "Resource not
		// found"). CodeResourceNotFound is deprecated for
		// jsonrpc.CodeInvalidParams, but it is the code the SDK's own
		// ResourceNotFoundError sends, which a GODEBUG setting of the SDK
		// turns back to -32002: reading it keeps this answer the SDK's.
		data, _ := json.Marshal(map[string]string{"uri": uri})
		//lint:ignore SA1019 the SDK's own current code for a resource not found (see above)
		return nil, &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: err.Error(), Data: data}
	case errors.Is(err, lro.ErrResourceTooLarge):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return &mcp.ReadResourceResult{
		// An offloaded file is one caller's, until it expires: not the
		// SDK's default of public and stale at once.
		Cacheable: mcp.Cacheable{CacheScope: host.CacheScopePrivate, TTLMs: int(c.TTLMs(time.Now()))},
		Contents:  []*mcp.ResourceContents{{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}},
	}, nil
}
