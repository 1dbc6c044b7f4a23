package proxy

import (
	"bytes"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/jsonscan"
)

// A server's result may carry a _meta of any size. The Offloader's gate
// drops one that does not fit beside the answer, with a note, but to
// judge it the proxy decoded it into maps and the gate encoded it again:
// a 50 MB _meta took the proxy to 391-418 MiB of peak RSS. A _meta that
// alone is over the bound (the threshold and lro.NoticeTokens) is
// dropped by the gate whatever else the result holds, so the proxy drops
// it before decoding, in place in the message, and adds the gate's note
// to the result itself (shedMeta, metaNote).

// minShedMeta is the smallest _meta the proxy estimates before decoding:
// a smaller one costs little to decode, and is the gate's to judge.
const minShedMeta = 64 << 10

// shedMeta removes from msg, a response to a tools/call, the _meta of its
// result when that alone is over the Offloader's bound, and returns the
// tokens it was estimated at (0: kept). msg keeps its length: the member's
// key is renamed to one no decoder reads, and its value becomes 0 and
// spaces.
func (p *Proxy) shedMeta(msg []byte) int {
	if len(msg) < minShedMeta {
		return 0
	}
	result, ok := jsonscan.Lookup(msg, "result")
	if !ok || len(result) < minShedMeta || result[0] != '{' {
		return 0
	}
	meta, ok := jsonscan.Lookup(result, "_meta")
	if !ok || len(meta) < minShedMeta || !jsonscan.Valid(meta) {
		return 0
	}
	tokens := p.off.EstimateTokens(meta) + 4 // and its member's name, as the gate counts it
	if tokens <= p.off.Config().ThresholdTokens+lro.NoticeTokens {
		return 0
	}
	// The key before the value: `"_meta"`, as Lookup matched it, then
	// white space, a colon, white space.
	k := cap(result) - cap(meta) // where meta starts in result, whose array it shares
	k = len(bytes.TrimRight(result[:k], " \t\r\n"))
	k = len(bytes.TrimRight(result[:k-1], " \t\r\n")) // past ':'
	if k < len(`"_meta"`) || string(result[k-len(`"_meta"`):k]) != `"_meta"` {
		return 0
	}
	copy(result[k-len(`"_meta"`):], `"_lro_"`)
	meta[0] = '0'
	for i := 1; i < len(meta); i++ {
		meta[i] = ' '
	}
	return tokens
}

// metaNote adds to res the note that its _meta of about tokens tokens was
// left out, as the gate says it.
func (p *Proxy) metaNote(res *mcp.CallToolResult, tokens int) {
	res.Content = append(res.Content, mcp.NewTextContent(fmt.Sprintf("lro: the result's _meta (about %d tokens) was left out: alone it is over the threshold of %d tokens. A server's _meta is not the model's content.", tokens, p.off.Config().ThresholdTokens)))
}
