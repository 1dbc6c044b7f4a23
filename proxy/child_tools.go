package proxy

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The local server's tools, served by the front server so that it judges
// their calls. They follow the client's listings: the tools of a listing
// (all its pages) replace those of the last one through applyListing,
// the code of a remote's listings, so the proxy keeps the current listing
// only, bounded by MaxToolsBytes, whatever the server renames. Before,
// each tool ever listed stayed: a server renaming 200 tools of 4 KiB at
// each listing grew the proxy by 3 MiB a listing. The server's
// announcements of a change reach the client at most once a second
// (changedTools), and a listing larger than MaxToolsBytes is refused.

// toolListing is the client's listing of the server's tools in progress.
type toolListing struct {
	open  bool              // a listing has begun, its last page not seen
	tools []json.RawMessage // its tools so far, as the server listed them
	size  int64
}

// follow notes the tools of a page of the client's listing, and serves
// the listing once its last page is seen. It fails when the listing is
// larger than MaxToolsBytes: the client gets the error instead of the
// page, and the tools served stay as they were.
func (r *relay) follow(h *header, tools []json.RawMessage, last bool) error {
	var params struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(h.Params, &params)
	r.mu.Lock()
	// A page asked for with a cursor continues the listing in progress;
	// one of no listing the proxy follows is bounded alone, and serves
	// nothing (its tools are called as if unlisted).
	followed := params.Cursor == "" || r.listed.open
	if !followed || params.Cursor == "" {
		r.listed = toolListing{}
	}
	r.listed.open = followed && !last
	for _, t := range tools {
		r.listed.size += int64(len(t))
	}
	if lim := r.p.overTools(r.listed.size); lim != nil {
		r.listed = toolListing{}
		r.mu.Unlock()
		return r.refuseTools(lim)
	}
	if !followed {
		r.listed = toolListing{}
		r.mu.Unlock()
		return nil
	}
	r.listed.tools = append(r.listed.tools, tools...)
	var page []byte
	if last {
		// The page applyListing reads, written by hand: json.Marshal
		// would compact each tool's JSON again.
		page = append(make([]byte, 0, r.listed.size+int64(len(r.listed.tools))+16), `{"tools":[`...)
		for i, t := range r.listed.tools {
			if i > 0 {
				page = append(page, ',')
			}
			page = append(page, t...)
		}
		page = append(page, "]}"...)
		r.listed = toolListing{}
	}
	r.mu.Unlock()
	if page != nil {
		r.p.syncMu.Lock()
		err := r.p.applyListing([]json.RawMessage{page})
		r.p.syncMu.Unlock()
		if err != nil {
			r.p.warnOnce("tools not served", "lro proxy: the server's tools cannot be served; their calls are judged without their schemas", "command", r.p.child.name, "error", err)
		}
	}
	return nil
}

// admitTools refuses a page of the server's tools whose message alone is
// larger than MaxToolsBytes before it is decoded: a listing of 10,000
// tools, 41.6 MB, took the proxy's peak RSS 175 MiB over idle when it was
// decoded only to be refused, 112 MiB when refused first (reading the
// line, within MaxResponseBytes, is the rest). follow bounds the pages of
// a listing together.
func (r *relay) admitTools(size int) error {
	if lim := r.p.overTools(int64(size)); lim != nil {
		return r.refuseTools(lim)
	}
	return nil
}

// refuseTools logs, once, that a listing of the server's tools was
// refused for lim, and returns lim for the client.
func (r *relay) refuseTools(lim *RemoteLimitError) error {
	r.p.warnOnce("tools too large", "lro proxy: the server's tool listing is larger than MaxToolsBytes; the client gets an error, and the tools served so far stay (raise Config.MaxToolsBytes, lro-proxy -max-tools-bytes)", "command", r.p.child.name)
	return lim
}

// serveUnlisted serves the server's tool name, called without being
// listed, as a tool without schemas, until the next listing.
func (r *relay) serveUnlisted(name string) {
	p := r.p
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if _, ok := p.served[name]; ok || p.front.GetTool(name) != nil {
		return
	}
	t := mcp.Tool{Name: name, RawInputSchema: json.RawMessage(`{"type":"object"}`)}
	if err := p.serve(map[string]server.ServerTool{name: {Tool: t, Handler: p.toolHandler(name)}}, nil); err != nil {
		p.warnOnce("invalid tool "+name, "lro proxy: a tool of the server cannot be judged; its results pass through the exit gate only", "tool", name, "error", err)
		return
	}
	p.served[name] = "" // not listed: the next listing drops it unless it lists it
}

// changedTools passes line, the server's announcement that its tools
// changed, to the client at most once in minResync: one that comes
// sooner is sent at the end of it, and those that come meanwhile are
// told by that one.
func (r *relay) changedTools(line []byte) {
	r.mu.Lock()
	if r.changeDue {
		r.mu.Unlock()
		return
	}
	d := r.p.pace.delay()
	r.changeDue = d > 0
	r.mu.Unlock()
	if d == 0 {
		r.write(line)
		return
	}
	time.AfterFunc(d, func() {
		r.mu.Lock()
		r.changeDue = false
		stopped := r.dead != nil
		r.mu.Unlock()
		if !stopped {
			r.write(line)
		}
	})
}

// forwardChild returns the front server's handler of the local server's
// tool name: it sends the client's request, byte for byte (its _meta and
// progress token too), and returns the server's result for the Offloader
// to judge.
func (p *Proxy) forwardChild(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		cc, _ := ctx.Value(childCallKey{}).(*childCall)
		if cc == nil {
			return mcp.NewToolResultError("lro proxy: no call to forward"), nil
		}
		r := cc.r
		resp, err := cc.answer, cc.err
		if !cc.fetched {
			resp, err = r.call(ctx, cc.id, string(mcp.MethodToolsCall), cc.line)
		}
		if err != nil {
			return mcp.NewToolResultError(r.failure("tools/call "+name, err)), nil
		}
		shed := p.shedMeta(resp)
		_, res, ok := decodeRemoteMessage(resp)
		if !ok {
			// An error, or a result the proxy does not read: toolCall
			// passes it through the exit gate, outside this handler.
			cc.unread = resp
			return &mcp.CallToolResult{}, nil
		}
		// The message is read: the Offloader holds the result only, not
		// the message too (50 MB of records were held twice).
		size := len(resp)
		cc.answer, resp = nil, nil
		collectAfter(size)
		res = p.judge(name, res)
		if shed > 0 {
			p.metaNote(res, shed)
		}
		return res, nil
	}
}
