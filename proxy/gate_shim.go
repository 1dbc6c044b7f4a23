package proxy

import (
	"context"
	"fmt"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
)

// bound is the library's exit gate for an answer the proxy relays without
// Serve: lro.Host.Bound.
//
// TEMPORARY: a shim until Host.Bound lands on main (branch bound, a commit
// "gate: ..."): it cuts the text of res to the threshold (4 bytes a
// token) with a marker. This commit is dropped when Bound lands.
func (p *Proxy) bound(_ context.Context, _ string, res host.Result) host.Result {
	threshold := p.off.Config().ThresholdTokens
	if threshold <= 0 {
		threshold = lro.DefaultThresholdTokens
	}
	room := 4 * threshold
	size := 0
	for _, c := range res.Content {
		size += len(c.Text)
	}
	if size <= room {
		return res
	}
	out := host.Result{IsError: res.IsError}
	for _, c := range res.Content {
		if room <= 0 {
			break
		}
		text := c.Text
		if len(text) > room {
			text = proxyClip(text, int64(room))
		}
		room -= len(text)
		out.Content = append(out.Content, host.TextContent(text))
	}
	out.Content = append(out.Content, host.TextContent(fmt.Sprintf("[the answer was %d bytes, over the threshold of %d tokens: cut]", size, threshold)))
	return out
}
