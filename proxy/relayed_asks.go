package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/records"
)

// The server's requests to the client that reach a model or a user,
// sampling/createMessage and elicitation/create, pass the exit gate
// before the client sees them, on both paths, whether the server sends
// them or a result asking for input carries them. They are cut, not
// offloaded: what reads them (the client's LLM, its user) has no
// lro_extract to read a file with. The texts are judged in order, as a
// tool answer's items: a sampling request's systemPrompt, then its
// messages' texts; an elicitation's requestedSchema and url, whole,
// then its message. Cut, the messages kept whole keep their roles, the
// text cut ends with the marker, the later ones are left out, and a
// notice says so (a last user message of a sampling request, the end of
// an elicitation's message). A form's schema or a URL cut would be
// neither: an elicitation whose schema or URL does not fit within the
// bound is refused, with a JSON-RPC error to the server that names its
// size (a *TooLargeError).

// A TooLargeError is the proxy's refusal of a request of the server
// (elicitation/create) that does not fit within the Offloader's bound
// and cannot be cut: a form's requestedSchema, or a URL. The server gets
// it as a JSON-RPC error (Invalid params) in place of the client's
// answer.
type TooLargeError struct {
	// Method is the request's method.
	Method string
	// Field is what does not fit: "requestedSchema" or "url".
	Field string
	// Bytes and Tokens are its size, in bytes and in tokens as the
	// Offloader's estimator counts them.
	Bytes, Tokens int
	// Threshold is Config.ThresholdTokens.
	Threshold int
}

// Error names the request, what does not fit and its size.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("lro-proxy: the server's %s was not relayed to the client: its %s is %d bytes (about %d tokens), over the proxy's threshold of %d tokens, and it cannot be cut; ask for less (fewer or smaller fields)",
		e.Method, e.Field, e.Bytes, e.Tokens, e.Threshold)
}

// isAsk reports whether method is a request of the server to the client
// that the proxy bounds.
func isAsk(method string) bool {
	return method == string(mcp.MethodSamplingCreateMessage) || method == string(mcp.MethodElicitationCreate)
}

// boundAsk returns params (JSON), those of the server's request method
// to the client, as the gate leaves them: as they came when they are
// within the bound or method is not one the proxy bounds. It fails with
// a *TooLargeError when the request cannot be cut.
func (p *Proxy) boundAsk(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if !isAsk(method) || p.off.Host().PassesUnchanged("", len(params)) {
		return params, nil
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(params, &r) != nil || r == nil {
		return params, nil // not a request a client reads
	}
	if method == string(mcp.MethodElicitationCreate) {
		return p.boundElicitation(ctx, method, params, r)
	}
	return p.boundSampling(ctx, method, params, r), nil
}

// askNotice says that the server's request method, of about tokens
// tokens, was cut, in at most lro.NoticeTokens.
func (p *Proxy) askNotice(method string, tokens int) string {
	return fmt.Sprintf("lro-proxy: the server's %s request (about %d tokens) was over the threshold of %d tokens, so it was cut: the text ending with %q was cut there, and what followed it was left out.",
		method, tokens, p.off.Config().ThresholdTokens, strings.TrimSpace(records.CutMarker))
}

// textsTokens estimates the judged texts of in.
func (p *Proxy) textsTokens(in []host.Content) int {
	n := 0
	for _, c := range in {
		if c.Judged() {
			n += p.off.EstimateTokens([]byte(c.Text))
		}
	}
	return n
}

// boundSampling bounds the params r (JSON: params) of a
// sampling/createMessage.
func (p *Proxy) boundSampling(ctx context.Context, method string, params json.RawMessage, r map[string]json.RawMessage) json.RawMessage {
	var system string
	_ = json.Unmarshal(r["systemPrompt"], &system)
	m := readMessages(system, r["messages"])
	res := host.Result{Content: m.items}
	out := p.off.Host().Bound(ctx, method, res)
	if sameResult(res, out) {
		return params
	}
	// The gate's notice is left out: the proxy's own comes last.
	lead, msgs := m.rebuild(out.Content, func(gatedItem) map[string]json.RawMessage { return nil })
	delete(r, "systemPrompt")
	if lead != nil {
		r["systemPrompt"], _ = json.Marshal(*lead)
	}
	msgs = append(msgs, userMessage(textBlock(p.askNotice(method, p.textsTokens(m.items)))))
	r["messages"], _ = json.Marshal(msgs)
	b, _ := json.Marshal(r)
	return b
}

// boundElicitation bounds the params r (JSON: params) of an
// elicitation/create: its requestedSchema and url whole or refused, its
// message cut.
func (p *Proxy) boundElicitation(ctx context.Context, method string, params json.RawMessage, r map[string]json.RawMessage) (json.RawMessage, error) {
	var in []host.Content
	var fields []string
	if s, ok := r["requestedSchema"]; ok && string(s) != "null" {
		in = append(in, host.Content{Text: string(s), Other: slot(len(in))})
		fields = append(fields, "requestedSchema")
	}
	var url string
	if json.Unmarshal(r["url"], &url) == nil && url != "" {
		in = append(in, host.Content{Text: url, Other: slot(len(in))})
		fields = append(fields, "url")
	}
	var message string
	_ = json.Unmarshal(r["message"], &message)
	msg := len(in)
	in = append(in, host.Content{Text: message, Other: slot(msg)})
	res := host.Result{Content: in}
	out := p.off.Host().Bound(ctx, method, res)
	if sameResult(res, out) {
		return params, nil
	}
	whole := make([]bool, len(in))
	text := ""
	for _, g := range gatedItems(in, out.Content) {
		switch {
		case g.slot == msg:
			text = g.text
		case g.slot >= 0 && !g.cut:
			whole[g.slot] = true
		}
	}
	for i, f := range fields {
		if !whole[i] {
			return nil, &TooLargeError{Method: method, Field: f, Bytes: len(in[i].Text), Tokens: p.off.EstimateTokens([]byte(in[i].Text)), Threshold: p.off.Config().ThresholdTokens}
		}
	}
	if text != "" {
		text += "\n\n"
	}
	r["message"], _ = json.Marshal(text + p.askNotice(method, p.textsTokens(in)))
	b, _ := json.Marshal(r)
	return b, nil
}

// boundInputRequests bounds, in place, the requests for input that r, a
// result asking for input, carries (inputRequests: each a method and its
// params), as the server's own requests are; it reports whether it
// changed any, and fails when one cannot be bounded.
func (p *Proxy) boundInputRequests(ctx context.Context, r map[string]json.RawMessage) (bool, error) {
	raw, ok := r["inputRequests"]
	if !ok {
		return false, nil
	}
	var reqs map[string]map[string]json.RawMessage
	if json.Unmarshal(raw, &reqs) != nil {
		return false, nil
	}
	changed := false
	for _, req := range reqs {
		var method string
		if json.Unmarshal(req["method"], &method) != nil || !isAsk(method) || req["params"] == nil {
			continue
		}
		params, err := p.boundAsk(ctx, method, req["params"])
		if err != nil {
			return false, err
		}
		if string(params) != string(req["params"]) {
			req["params"] = params
			changed = true
		}
	}
	if changed {
		r["inputRequests"], _ = json.Marshal(reqs)
	}
	return changed, nil
}

// typedAsk is boundAsk for params, those of a request of method decoded
// by mcp-go's client (a remote's request the typed path relays, or one a
// result asking for input carried, which mcp-go's client fulfils): they
// are replaced in place by what the gate made of them.
func typedAsk[T any](ctx context.Context, p *Proxy, method string, params *T) error {
	b, err := json.Marshal(params)
	if err != nil {
		return nil
	}
	out, err := p.boundAsk(ctx, method, b)
	if err != nil {
		p.log.Warn("lro proxy: refused a request of the remote too large to relay", "remote", p.cfg.Remote, "error", err)
		return err
	}
	if string(out) == string(b) {
		return nil
	}
	var bounded T
	if err := json.Unmarshal(out, &bounded); err != nil {
		return fmt.Errorf("lro: proxy: the remote's %s, bounded: %w", method, err)
	}
	*params = bounded
	return nil
}
