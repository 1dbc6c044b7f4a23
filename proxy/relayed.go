package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/records"
)

// What the proxy relays besides tool answers that reaches a model's
// context passes the exit gate as a tool answer does, on both paths (a
// local server's and a remote's, raw or typed): the server's prompts/get
// results and resources/read results of its own resources (here), and
// its requests to the client, sampling/createMessage and
// elicitation/create, with those a result asking for input carries
// (relayed_asks.go). Each is handed to the Offloader as a host.Result
// whose items are its texts, each marked with its place (a slot), and
// put back together from what the gate returns: a result within the
// bound goes on as it came, byte for byte.
//
// A prompt or a resource over the bound is offloaded as a tool answer is
// (a descriptor in its place, the whole text in a file lro_extract
// reads), or cut when it cannot be (or with Config.MemoryToolsOnly): an
// agent that asked for it can still read any part of it, which a cut
// would lose for good. A request of the server goes to a client that has
// no lro_extract to read a file with (its LLM, its user), so it is cut.

// slot marks an item handed to the gate: its index in the list of the
// texts of what is relayed.
type slot int

// gatedItem is an item of what the gate made of a list of items: one of
// the list's (whole, or cut with the marker), or a text or link of the
// gate's own (its notice, a descriptor, a pointer to the file).
type gatedItem struct {
	slot int // the index of the list's item, or -1 for the gate's own
	text string
	cut  bool // the list's item, cut
	link *host.ResourceLink
}

// gatedItems maps out, what the gate made of in (items marked with their
// slots), back onto in: the gate keeps the items it leaves whole as they
// were (slot and all), cuts one to a prefix of its text ending with the
// marker, and leaves the later ones out.
func gatedItems(in, out []host.Content) []gatedItem {
	kept := make([]bool, len(in))
	items := make([]gatedItem, 0, len(out))
	for _, c := range out {
		if s, ok := c.Other.(slot); ok && int(s) >= 0 && int(s) < len(in) && !kept[s] {
			kept[s] = true
			items = append(items, gatedItem{slot: int(s), text: c.Text, cut: c.Text != in[s].Text})
			continue
		}
		if c.Link != nil {
			items = append(items, gatedItem{slot: -1, link: c.Link})
			continue
		}
		if body, ok := strings.CutSuffix(c.Text, records.CutMarker); ok {
			if i := firstLeft(in, kept); i >= 0 && strings.HasPrefix(in[i].Text, body) {
				kept[i] = true
				items = append(items, gatedItem{slot: i, text: c.Text, cut: true})
				continue
			}
		}
		items = append(items, gatedItem{slot: -1, text: c.Text})
	}
	return items
}

// firstLeft returns the index of the first judged item of in not kept,
// or -1.
func firstLeft(in []host.Content, kept []bool) int {
	for i, c := range in {
		if !kept[i] && c.Judged() {
			return i
		}
	}
	return -1
}

// blockItem returns the item the gate judges of a content block (raw,
// JSON) in slot s: the text of a text block or of an embedded text
// resource; none for an image, audio, a binary resource or a link, which
// are not judged, as in a tool answer; the JSON of a block of a type the
// proxy does not know, which is what a client would show of it.
func blockItem(raw json.RawMessage, s slot) host.Content {
	var b struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Resource *struct {
			Text string `json:"text"`
		} `json:"resource"`
	}
	c := host.Content{Other: s}
	if json.Unmarshal(raw, &b) != nil {
		c.Text = string(raw)
		return c
	}
	switch b.Type {
	case "text":
		c.Text = b.Text
	case "resource":
		if b.Resource != nil {
			c.Text = b.Resource.Text
		}
	case "image", "audio", "resource_link":
	default:
		c.Text = string(raw)
	}
	return c
}

// textBlock is the JSON of a text content block.
func textBlock(text string) json.RawMessage {
	b, _ := json.Marshal(mcp.NewTextContent(text))
	return b
}

// linkBlock is the JSON of a resource link content block.
func linkBlock(l *host.ResourceLink) json.RawMessage {
	link := mcp.NewResourceLink(l.URI, l.Name, l.Description, l.MIMEType)
	size := l.Size
	link.Size = &size
	b, _ := json.Marshal(link)
	return b
}

// boundResult returns what the client gets of result, the server's
// result (JSON) of a request of method with params: prompts/get and
// resources/read through the gate, the requests for input a result
// carries bounded as the server's requests are (see boundAsk); other
// methods' results as they came. It fails when a request for input
// cannot be bounded: the client then gets the error, not the result.
func (p *Proxy) boundResult(ctx context.Context, method string, params, result json.RawMessage) (json.RawMessage, error) {
	if method != string(mcp.MethodPromptsGet) && method != string(mcp.MethodResourcesRead) {
		return result, nil
	}
	if p.off.Host().PassesUnchanged("", len(result)) {
		return result, nil
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil || r == nil {
		return result, nil // not a result a client reads
	}
	changed, err := p.boundInputRequests(ctx, r)
	if err != nil {
		return nil, err
	}
	var out json.RawMessage
	if method == string(mcp.MethodPromptsGet) {
		var req struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(params, &req)
		out = p.boundPrompt(ctx, req.Name, r)
	} else {
		var req struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(params, &req)
		out = p.boundRead(ctx, req.URI, r)
	}
	if out == nil && !changed {
		return result, nil
	}
	if out == nil {
		out, _ = json.Marshal(r)
	}
	return out, nil
}

// judgeRelayed returns what the gate makes of res, the texts of a prompt
// or a resource relayed as tool: offloaded as a tool answer is, with a
// generic policy, or cut where offloading is not for it
// (Config.MemoryToolsOnly). It reports whether res was replaced.
func (p *Proxy) judgeRelayed(ctx context.Context, tool string, res host.Result) (host.Result, bool) {
	h := p.off.Host()
	if p.cfg.MemoryToolsOnly {
		out := h.Bound(ctx, tool, res)
		return out, !sameResult(res, out) || (res.Meta != nil && out.Meta == nil)
	}
	call := host.Call{Tool: tool, NativeExtract: p.cfg.Extract, Resources: h.ServesResources()}
	out, replaced, err := h.ServeWith(ctx, call, lro.ToolPolicy{Generic: true}, func(context.Context) (host.Result, error) { return res, nil })
	if err != nil {
		return h.Bound(ctx, tool, res), true // cannot happen: next never fails
	}
	return out, replaced
}

// metaOf returns the _meta of r for the gate, or nil.
func metaOf(r map[string]json.RawMessage) any {
	if m, ok := r["_meta"]; ok && string(m) != "null" {
		return m
	}
	return nil
}

// boundPrompt returns r, a prompts/get result of the prompt name, as the
// gate leaves it, or nil when it leaves it whole. Its description and
// the texts of its messages are judged in order; offloaded, the prompt
// becomes a user message with the descriptor; cut, the messages kept
// whole keep their roles, the one cut becomes a text block, and the
// gate's notice comes as a last user message.
func (p *Proxy) boundPrompt(ctx context.Context, name string, r map[string]json.RawMessage) json.RawMessage {
	var desc string
	_ = json.Unmarshal(r["description"], &desc)
	m := readMessages(desc, r["messages"])
	res := host.Result{Content: m.items, Meta: metaOf(r)}
	out, replaced := p.judgeRelayed(ctx, "prompt_"+name, res)
	if !replaced {
		return nil
	}
	lead, msgs := m.rebuild(out.Content, func(g gatedItem) map[string]json.RawMessage {
		if g.link != nil {
			return userMessage(linkBlock(g.link))
		}
		return userMessage(textBlock(g.text))
	})
	delete(r, "description")
	if lead != nil {
		r["description"], _ = json.Marshal(*lead)
	}
	r["messages"], _ = json.Marshal(msgs)
	if out.Meta == nil {
		delete(r, "_meta")
	}
	b, _ := json.Marshal(r)
	return b
}

// boundRead returns r, a resources/read result of uri, as the gate leaves
// it, or nil when it leaves it whole. The texts of its contents are
// judged in order (blobs are not, as in a tool answer); offloaded, the
// resource's contents are a text content with the descriptor; cut, the
// contents kept whole stay as they were, the one cut keeps its uri and
// type with the text cut, and the gate's notice comes last, as a text
// content of uri.
func (p *Proxy) boundRead(ctx context.Context, uri string, r map[string]json.RawMessage) json.RawMessage {
	var contents []map[string]json.RawMessage
	if json.Unmarshal(r["contents"], &contents) != nil {
		return nil
	}
	in := make([]host.Content, len(contents))
	for i, c := range contents {
		in[i] = host.Content{Other: slot(i)}
		_ = json.Unmarshal(c["text"], &in[i].Text)
	}
	out, replaced := p.judgeRelayed(ctx, "resource_read", host.Result{Content: in, Meta: metaOf(r)})
	if !replaced {
		return nil
	}
	quoted, _ := json.Marshal(uri)
	outContents := []map[string]json.RawMessage{}
	for _, g := range gatedItems(in, out.Content) {
		switch {
		case g.link != nil:
			// The descriptor names the file, which lro_extract reads.
		case g.slot < 0:
			text, _ := json.Marshal(g.text)
			outContents = append(outContents, map[string]json.RawMessage{"uri": quoted, "mimeType": json.RawMessage(`"text/plain"`), "text": text})
		case g.cut:
			c := cloneMap(contents[g.slot])
			c["text"], _ = json.Marshal(g.text)
			outContents = append(outContents, c)
		default:
			outContents = append(outContents, contents[g.slot])
		}
	}
	r["contents"], _ = json.Marshal(outContents)
	if out.Meta == nil {
		delete(r, "_meta")
	}
	b, _ := json.Marshal(r)
	return b
}

// cloneMap returns a shallow copy of m.
func cloneMap(m map[string]json.RawMessage) map[string]json.RawMessage {
	c := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// typedBound is boundResult for res, a result of method decoded by
// mcp-go's client (the remote's prompts/get and resources/read served by
// the local server): res itself when the gate leaves it whole, or the
// result the gate made of it, decoded by parse.
func typedBound[T any](ctx context.Context, p *Proxy, method string, params any, res *T, parse func(*json.RawMessage) (*T, error)) (*T, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return res, nil
	}
	pb, _ := json.Marshal(params)
	out, err := p.boundResult(ctx, method, pb, b)
	if err != nil {
		return nil, err
	}
	if string(out) == string(b) {
		return res, nil
	}
	raw := json.RawMessage(out)
	return parse(&raw)
}

// boundErrorMessage returns the message that answers the request id with
// e (JSON), the server's JSON-RPC error to a prompts/get or
// resources/read: as it came within MaxErrorBytes, as a remote's tool
// error is; otherwise its code and its message cut at MaxErrorBytes,
// without its data.
func (p *Proxy) boundErrorMessage(id, e json.RawMessage) []byte {
	if p.lim.errText <= 0 || int64(len(e)) <= p.lim.errText {
		return rawMessage(id, "error", e)
	}
	var d struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(e, &d)
	return errorMessage(id, d.Code, d.Message, p.lim.errText)
}

// clipError returns err with its text cut at MaxErrorBytes: a remote's
// error to a prompts/get or resources/read on the typed path, which the
// local server sends as a JSON-RPC error's message.
func (p *Proxy) clipError(err error) error {
	if err == nil || p.lim.errText <= 0 || int64(len(err.Error())) <= p.lim.errText {
		return err
	}
	return errors.New(proxyClip(err.Error(), p.lim.errText))
}
