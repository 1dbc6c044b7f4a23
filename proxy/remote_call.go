package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A tool call forwarded to the remote: its arguments as the client sent
// them, retried on a new connection only when it certainly never reached
// the remote, and its failures said in terms the model can act on.

// forward returns the handler that calls tool on the remote. The
// arguments go as the client sent them, byte for byte; the result comes
// back untouched for the offload middleware to judge.
func (p *Proxy) forward(tool string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
		defer cancel()
		fwd := mcp.CallToolRequest{Params: req.Params}
		fwd.Params.Name = tool
		fwd.Params.Meta = nil // the client's _meta is not the remote's business, but its progress token
		if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
			fwd.Params.Meta = &mcp.Meta{ProgressToken: m.ProgressToken}
		}
		var err error
		for attempt, retired := 0, 0; attempt < 2; attempt++ {
			var c *client.Client
			if c, err = p.connect(ctx); err != nil {
				break
			}
			tr, _ := c.GetTransport().(*proxyTransport)
			if !tr.begin() {
				err = errRetired
				if retired++; retired < 3 {
					attempt-- // retired meanwhile: not sent, the next connection takes it
				}
				continue
			}
			var res *mcp.CallToolResult
			rc := &rawCall{}
			res, err = c.CallTool(withRawCall(ctx, rc), fwd)
			tr.end()
			if err == nil {
				if rc.res != nil {
					res = rc.res // decoded once by the transport, not parsed
				}
				res = p.judge(tool, res)
				if rc.shed > 0 {
					p.metaNote(res, rc.shed)
				}
				return res, nil
			}
			var lim *RemoteLimitError
			if ctx.Err() != nil || !isTransportError(err) || errors.As(err, &lim) || errors.As(err, new(*redirectError)) {
				break // this call's own deadline, the remote's answer, too much of one, or a redirect away
			}
			p.drop(c)
			if !neverSent(err) {
				break // it may have run: never send it twice
			}
		}
		return mcp.NewToolResultError(proxyClip(p.failure(ctx, tool, err), p.lim.errText)), nil
	}
}

// failure says why a forwarded call of tool failed with err.
func (p *Proxy) failure(ctx context.Context, tool string, err error) string {
	var lim *RemoteLimitError
	var redirect *redirectError
	switch {
	case errors.As(err, &redirect):
		return fmt.Sprintf("remote server %s, calling %s: %v", p.cfg.Remote, tool, redirect)
	case errors.As(err, &lim):
		return fmt.Sprintf("remote server %s sent a %s for %s larger than the proxy's limit of %s (%s); the proxy stopped reading it. Ask for less (fewer results, a narrower query), or raise the limit.",
			p.cfg.Remote, lim.what(), tool, proxySize(lim.Bytes), lim.Limit)
	case ctx.Err() != nil:
		return fmt.Sprintf("remote server %s did not answer %s within %s", p.cfg.Remote, tool, p.cfg.CallTimeout)
	case errors.As(err, new(*remoteHTTPError)):
		return fmt.Sprintf("remote server %s failed %s: %v", p.cfg.Remote, tool, err)
	case isTransportError(err) || errors.Is(err, errProxyClosed):
		return fmt.Sprintf("remote server %s is unreachable (%v); the proxy reconnects when it is back", p.cfg.Remote, err)
	default:
		return fmt.Sprintf("remote %s: %v", tool, err)
	}
}
