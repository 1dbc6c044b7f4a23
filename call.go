package lro

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mcplro/lro/internal/jsonscan"
)

// A Call is one tool call as a host adapter hands it to [Offloader.Serve].
// The adapters of this module fill it from their SDK's request; an adapter
// for another host does the same.
type Call struct {
	// Tool is the name of the tool called.
	Tool string
	// Arguments are the call's arguments decoded from JSON, or nil. Only
	// "detail" and "query" are read.
	Arguments map[string]any
	// FromProxy says the client is an LRO proxy (see [ProxyAnnounced]),
	// which offloads on its own side: it gets full results inline.
	FromProxy bool
	// OutputSchema says the tool declares an output schema.
	OutputSchema bool
	// NativeExtract says the server handling the call serves lro_extract,
	// so that guidance points to it instead of the shell.
	NativeExtract bool
}

// A Result is a tool result reduced to what offloading reads and writes:
// the host-neutral form the adapters translate their SDK's result to and
// from.
type Result struct {
	// Content holds the content items in order.
	Content []Content
	// Structured is the structured content: JSON bytes (json.RawMessage
	// or []byte), a Go value that encoding/json marshals, or nil for none.
	Structured any
	// IsError marks a tool error. Errors pass through untouched.
	IsError bool
	// NeedsInput marks a result that asks the client for more input; it
	// passes through untouched.
	NeedsInput bool
}

// Content is one content item of a [Result].
type Content struct {
	// Text is the text of a text item.
	Text string
	// Other holds the host's own value of an item that is not text (an
	// image, a resource), which offloading keeps as it is. It is nil for
	// a text item.
	Other any
}

// TextContent returns a text item.
func TextContent(text string) Content { return Content{Text: text} }

// Serve runs next, the tool's handler, with offloading: the host-neutral
// core of every adapter ([Offloader.Middleware] for mcp-go, package gosdk
// for the official SDK). next must pass on the context it is given, which
// carries the collector of [Collect].
//
// When replaced is false the handler's own result goes out unchanged, and
// the returned Result is only a view of it; when true, the returned Result
// is what to send instead: a descriptor, a truncated result with a warning,
// or a tool error (an invalid detail argument). A handler error is
// returned as it is.
func (o *Offloader) Serve(ctx context.Context, call Call, next func(context.Context) (Result, error)) (res Result, replaced bool, err error) {
	if !o.cfg.Enabled || call.FromProxy {
		res, err = next(ctx)
		return res, false, err
	}
	policy, ok := o.policyFor(call.Tool)
	if !ok {
		res, err = next(ctx)
		if err == nil {
			o.warnIfLarge(ctx, call.Tool, res, fmt.Sprintf("has no offload policy; add lro.WithTool(%q, lro.ToolPolicy{Generic: true}) or lro.WithAnyTool to offload it", call.Tool))
		}
		return res, false, err
	}
	return o.serve(ctx, call, policy, next)
}

// serveWith is Serve under policy, whatever the tools configured.
func (o *Offloader) serveWith(ctx context.Context, call Call, policy ToolPolicy, next func(context.Context) (Result, error)) (Result, bool, error) {
	if !o.cfg.Enabled || call.FromProxy {
		res, err := next(ctx)
		return res, false, err
	}
	return o.serve(ctx, call, policy, next)
}

func (o *Offloader) serve(ctx context.Context, call Call, policy ToolPolicy, next func(context.Context) (Result, error)) (Result, bool, error) {
	detail := policy.DefaultDetail
	if detail == "" {
		detail = DetailLight
	}
	if v, present := call.Arguments["detail"]; present && v != nil && !policy.Generic {
		s, _ := v.(string)
		d, err := ParseDetail(s)
		if err != nil {
			msg := fmt.Sprintf("%s: invalid detail %s: want \"light\", \"medium\" or \"full\"", call.Tool, jsonText(v))
			return Result{IsError: true, Content: []Content{TextContent(msg)}}, true, nil
		}
		detail = d
	}
	if call.OutputSchema && policy.SkipOutputSchema {
		res, err := next(ctx)
		if err == nil {
			o.warnIfLarge(ctx, call.Tool, res, "declares an output schema and its policy has SkipOutputSchema, so it is not offloaded")
		}
		return res, false, err
	}
	ctx = context.WithValue(ctx, nativeKey{}, call.NativeExtract)

	c := &collector{o: o, threshold: o.cfg.ThresholdTokens}
	res, err := next(context.WithValue(ctx, collectorKey{}, c))
	if err != nil || res.IsError || res.NeedsInput {
		return res, false, err
	}
	set := ResultSet{Operation: policy.operationFor(call.Tool), Detail: detail, Generic: policy.Generic}
	if q, ok := call.Arguments["query"].(string); ok {
		set.Query = &q
	}

	records, scores, tokens, collected, promised, cerr := c.collected()
	if cerr != nil {
		o.logf(ctx, slog.LevelWarn, "lro: collected records cannot be offloaded", call.Tool, cerr)
		return res, false, nil
	}
	if collected {
		set.Records, set.Scores, set.Tokens, set.Validated = records, scores, tokens, true
		f := found{records: records, elements: rawElements(records)}
		out, err := o.Offload(ctx, set)
		if err != nil {
			o.logf(ctx, slog.LevelWarn, "lro: result not offloaded", call.Tool, err)
			if !promised {
				return res, false, nil
			}
			// The handler returned a placeholder, trusting Collect: send
			// the collected records instead, complete.
			return Result{Content: []Content{TextContent(string(f.truncated(len(records))))}}, true, nil
		}
		return o.respond(res, out, f, false)
	}

	p, ok := payloadOf(res)
	if !ok {
		return res, false, nil
	}
	// Fast path: no rune costs more than a token per three bytes, so a
	// result this small is under the threshold without a look inside.
	if _, heuristic := o.opts.estimator.(HeuristicEstimator); heuristic && p.size() <= 3*o.cfg.ThresholdTokens && p.structuredKnown() {
		return res, false, nil
	}
	payload, isJSON, tokens, ok := o.measure(p)
	if !ok || tokens <= o.cfg.ThresholdTokens {
		return res, false, nil
	}
	f := findRecords(payload, isJSON, policy.RecordsField)
	set.Records, set.Scores, set.Extra, set.Tokens, set.Validated = f.records, f.scores, f.extra, tokens, true
	set.sent, set.overhead = f.elements, o.EstimateTokens(f.truncated(0))
	set.Generic = set.Generic || f.generic
	out, err := o.Offload(ctx, set)
	if err != nil {
		o.logf(ctx, slog.LevelWarn, "lro: result not offloaded", call.Tool, err)
		return res, false, nil
	}
	return o.respond(res, out, f, p.hasStructured)
}

// respond turns an outcome into the result to send.
func (o *Offloader) respond(res Result, out Outcome, f found, structured bool) (Result, bool, error) {
	switch out.Action {
	case Offloaded:
		b, err := marshalText(out.Response)
		if err != nil {
			return res, false, nil
		}
		r := Result{Content: []Content{TextContent(string(b))}}
		if structured {
			r.Structured = json.RawMessage(b)
		}
		return r, true, nil
	case Truncated:
		payload := f.truncated(out.Kept)
		r := Result{Content: []Content{TextContent(string(payload)), TextContent(out.Warning)}}
		if structured && f.object != nil {
			r.Structured = json.RawMessage(payload)
		}
		return r, true, nil
	}
	return res, false, nil
}

// payload is what a result offers to be judged: one text item and the
// structured content next to it.
type payload struct {
	text          string
	structured    []byte // the structured content's bytes, when the host gave them
	value         any    // the structured content as a Go value, otherwise
	hasStructured bool
}

// payloadOf returns the payload of a result made of one text item.
func payloadOf(res Result) (payload, bool) {
	if len(res.Content) != 1 || res.Content[0].Other != nil {
		return payload{}, false
	}
	p := payload{text: res.Content[0].Text, hasStructured: res.Structured != nil}
	switch s := res.Structured.(type) {
	case json.RawMessage:
		p.structured = s
	case []byte:
		p.structured = s
	default:
		p.value = s
	}
	return p, true
}

func (p payload) size() int { return len(p.text) + len(p.structured) }

// structuredKnown reports whether the payload's size covers its structured
// content: there is none, its bytes are known, or the text is JSON (and so
// taken as its serialization).
func (p payload) structuredKnown() bool {
	return !p.hasStructured || p.structured != nil || looksJSON(p.text)
}

// measure returns the bytes to judge and their estimate. The threshold
// applies to the result set once: a JSON text is taken to be the
// serialization of the structured content next to it, as the MCP
// specification says it should be, and is what is judged; only a text that
// is something else (a summary) adds the structured content.
func (o *Offloader) measure(p payload) (data []byte, isJSON bool, tokens int, ok bool) {
	data = bytesOf(p.text)
	isJSON = looksJSON(p.text) && jsonscan.Valid(data)
	tokens = o.EstimateTokens(data)
	if p.hasStructured && !isJSON {
		s := p.structured
		if s == nil {
			b, err := json.Marshal(p.value)
			if err != nil {
				return nil, false, 0, false
			}
			s = b
		}
		tokens += o.EstimateTokens(s)
		data, isJSON = s, jsonscan.Valid(s)
	}
	return data, isJSON, tokens, true
}

// warnIfLarge logs, once per tool, that a result over the threshold went
// out inline, and why. A silent pass-through of 300 KB is the surprise
// that costs a newcomer an hour.
func (o *Offloader) warnIfLarge(ctx context.Context, tool string, res Result, why string) {
	if res.IsError || res.NeedsInput || tool == ExtractToolName {
		return
	}
	if _, done := o.warned.Load(tool); done || o.resultTokens(res) <= o.cfg.ThresholdTokens {
		return
	}
	if _, loaded := o.warned.LoadOrStore(tool, true); loaded {
		return
	}
	o.logger().LogAttrs(ctx, slog.LevelWarn, "lro: tool "+tool+" sent a result over the threshold inline: it "+why,
		slog.String("tool", tool), slog.Int("threshold_tokens", o.cfg.ThresholdTokens))
}

// resultTokens estimates a result as Serve would judge it.
func (o *Offloader) resultTokens(res Result) int {
	p, ok := payloadOf(res)
	if !ok {
		t := 0
		for _, c := range res.Content {
			t += o.EstimateTokens(bytesOf(c.Text))
		}
		return t
	}
	if _, heuristic := o.opts.estimator.(HeuristicEstimator); heuristic && p.size() <= 3*o.cfg.ThresholdTokens && p.structuredKnown() {
		return 0
	}
	_, _, tokens, _ := o.measure(p)
	return tokens
}

// logger returns the configured logger, or slog's default one: warnings
// about results sent inline against the user's likely intent are never
// silent.
func (o *Offloader) logger() *slog.Logger {
	if o.opts.logger != nil {
		return o.opts.logger
	}
	return slog.Default()
}

// nativeKey is the context key under which Serve says whether the server
// handling the call serves lro_extract.
type nativeKey struct{}

// marshalText encodes v as JSON a model reads: without HTML escaping, so
// that '>' stays '>' and not \u003e.
func marshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ProxyAnnounced reports whether a client announced itself as an LRO proxy:
// proxy: true in its client info, or the experimental capability
// [ProxyCapability]. Both are the JSON objects the client sent, decoded;
// either may be nil. Host adapters call it on every channel the client may
// have used (initialize, the request's _meta).
func ProxyAnnounced(clientInfo, experimental map[string]any) bool {
	if clientInfo["proxy"] == true {
		return true
	}
	_, ok := experimental[ProxyCapability]
	return ok
}

// looksJSON reports whether text is shaped like a JSON object or array.
func looksJSON(text string) bool {
	t := strings.TrimSpace(text)
	return len(t) >= 2 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']')
}

func jsonText(v any) string {
	b, err := marshalText(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func (o *Offloader) logf(ctx context.Context, level slog.Level, msg, tool string, err error) {
	if l := o.opts.logger; l != nil {
		l.LogAttrs(ctx, level, msg, slog.String("tool", tool), slog.Any("error", err))
	}
}
