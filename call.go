package lro

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// A Call is one tool call as a host adapter hands it to [Host.Serve].
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
	// Resources says the server handling the call answers resources/read
	// for offloaded files, so that results carry a resource link.
	Resources bool
	// Session identifies the MCP session, or else the client connection,
	// for Config.SessionBudgetTokens; empty when there is neither. Call
	// [Offloader.EndSession] when it ends.
	Session string
	// Client describes the client, for a [WithDelivery] function.
	Client ClientInfo
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
	// Text is the text of a text item or of an embedded text resource.
	Text string
	// URI is set for an embedded text resource: the resource's URI. Its
	// text is Text; Other holds the host's item.
	URI string
	// Other holds the host's own value of an item that is not text (an
	// image, audio, a binary resource), which offloading keeps as it is.
	// It is nil for a text item.
	Other any
	// Link is set for a resource link this package adds: a pointer to an
	// offloaded file that the client reads with resources/read. Adapters
	// turn it into their SDK's resource_link item.
	Link *ResourceLink
}

// A ResourceLink points at an offloaded file as an MCP resource, which any
// client can read through the server, wherever its disk is.
type ResourceLink struct {
	URI         string // lro:// URI the server answers resources/read for
	Name        string // the file's name
	Description string
	MIMEType    string // "application/jsonl", or "text/plain" for lines of text
	Size        int64  // the file's size in bytes
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
func (h Host) Serve(ctx context.Context, call Call, next func(context.Context) (Result, error)) (res Result, replaced bool, err error) {
	o := h.o
	if !o.cfg.IsEnabled() {
		res, err = next(ctx)
		return res, false, err
	}
	if call.FromProxy {
		return o.serveProxy(ctx, next)
	}
	policy, ok := o.policyFor(call.Tool)
	if !ok {
		res, err = next(ctx)
		if err == nil {
			o.warnIfLarge(ctx, call.Tool, res, fmt.Sprintf("has no offload policy, so its large results pass inline: the server gives it one with lro.WithTool(%q, lro.ToolPolicy{Generic: true}) or lro.WithAnyTool (lro-proxy judges every remote tool unless -memory-tools-only)", call.Tool))
		}
		return res, false, err
	}
	return o.serve(ctx, call, policy, next)
}

// serveWith is Serve under policy, whatever the tools configured.
func (o *Offloader) serveWith(ctx context.Context, call Call, policy ToolPolicy, next func(context.Context) (Result, error)) (Result, bool, error) {
	if !o.cfg.IsEnabled() {
		res, err := next(ctx)
		return res, false, err
	}
	if call.FromProxy {
		return o.serveProxy(ctx, next)
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
		switch {
		case err == nil:
			detail = d
		case policy.detect:
			// A search tool's own detail argument ("brief"): its
			// records are judged by what they are, not by this.
		default:
			msg := fmt.Sprintf("%s: invalid detail %s: want \"light\", \"medium\" or \"full\"", call.Tool, echo(jsonText(v)))
			return Result{IsError: true, Content: []Content{TextContent(msg)}}, true, nil
		}
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
	defer c.discard()
	res, err := next(context.WithValue(ctx, collectorKey{}, c))
	if err != nil || res.IsError || res.NeedsInput {
		return res, false, err
	}
	delivery := o.deliveryOf(call)
	set := ResultSet{Operation: policy.operationFor(call.Tool), Detail: detail, Generic: policy.Generic}
	if q, ok := call.Arguments["query"].(string); ok {
		set.Query = &q
	}

	records, tokens, collected, promised, cerr := c.collected()
	if cerr != nil {
		o.logf(ctx, slog.LevelWarn, "lro: collected records cannot be offloaded", call.Tool, cerr)
		return res, false, nil
	}
	if collected {
		return o.serveCollected(ctx, call, delivery, res, set, records, tokens, promised)
	}
	// Under a session budget every result is measured: one under the
	// threshold may still have to be offloaded.
	small := o.surelySmall(res) && !o.sessionBudgeted(call)
	if small {
		return res, false, nil
	}
	doc, ok := o.documentOf(res)
	if !ok {
		return res, false, nil
	}
	if doc.tokens <= o.cfg.ThresholdTokens {
		if !o.mustOffload(call, doc.tokens, delivery) {
			return res, false, nil
		}
		set.force = true
	}
	l := doc.layoutOf(policy.RecordsField)
	if l.cursor != "" {
		o.warnOnce(ctx, call.Tool, "returned a page with an active cursor ("+l.cursor+") without handing its full set to lro.Collect, so the page is sent inline: offloading one page would hide the others. Call lro.Collect(ctx, allRecords, scores) in the handler to offload the full set")
		return res, false, nil
	}
	beside := o.keptTokens(res, doc)
	sets := o.sectionSets(set, &l, doc.tokens, beside, policy, call.Tool)
	d := delivery()
	if d.Mode == DeliveryTruncate {
		return o.respond(res, doc, &l, o.truncateInline(sets, &l, beside), call, d, sets[0]), true, nil
	}
	if c := o.opts.dir.resultCap(); c > 0 && doc.size() > c {
		err := fmt.Errorf("%w: it is %d bytes and the cap is %d", ErrResultTooLarge, doc.size(), c)
		return o.respond(res, doc, &l, o.refuse(ctx, sets, &l, beside, err), call, d, sets[0]), true, nil
	}
	out, err := o.offloadSections(ctx, sets, &l, beside)
	if err != nil {
		o.logf(ctx, slog.LevelWarn, "lro: result not offloaded", call.Tool, err)
		return res, false, nil
	}
	if out.Action == Inline {
		return res, false, nil
	}
	return o.respond(res, doc, &l, out, call, d, sets[0]), true, nil
}

// serveProxy serves a proxy client, which offloads on its own side: it
// gets the result inline, and, when the handler handed a set over the
// threshold to Collect, the full set in place of the handler's rendering
// of it (a budgeted text, one page), so that the proxy judges and offloads
// what a direct client would have had offloaded.
func (o *Offloader) serveProxy(ctx context.Context, next func(context.Context) (Result, error)) (Result, bool, error) {
	c := &collector{o: o, threshold: o.cfg.ThresholdTokens}
	defer c.discard()
	res, err := next(context.WithValue(ctx, collectorKey{}, c))
	if err != nil || res.IsError || res.NeedsInput {
		return res, false, err
	}
	records, tokens, collected, _, cerr := c.collected()
	if cerr != nil || !collected || tokens <= o.cfg.ThresholdTokens {
		return res, false, nil
	}
	var b bytes.Buffer
	b.WriteByte('[')
	err = records.each(func(i int, r *record) bool {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(r.line)
		return true
	})
	if err != nil {
		return res, false, nil
	}
	b.WriteByte(']')
	return Result{Content: []Content{TextContent(b.String())}}, true, nil
}

// sessionBudgeted reports whether call counts against a session budget.
func (o *Offloader) sessionBudgeted(call Call) bool {
	return o.cfg.SessionBudgetTokens > 0 && call.Session != ""
}

// serveCollected offloads the set a handler handed to Collect.
func (o *Offloader) serveCollected(ctx context.Context, call Call, delivery func() DeliveryChoice, res Result, set ResultSet, records recordSource, tokens int, promised bool) (Result, bool, error) {
	set.src, set.Tokens, set.Validated = records, tokens, true
	l := layout{root: []byte("[]"), sections: []section{{found: found{src: records}}}}
	// The handler's own result is a rendering of the set, or a
	// placeholder: all of it is replaced.
	doc := document{replace: make([]int, len(res.Content))}
	for i := range doc.replace {
		doc.replace[i] = i
	}
	if len(res.Content) == 0 {
		doc.replace = []int{0}
	}
	if tokens <= o.cfg.ThresholdTokens && o.mustOffload(call, tokens, delivery) {
		set.force = true
	}
	over := tokens > o.cfg.ThresholdTokens || set.force
	d := delivery()
	var out Outcome
	var err error
	head, lost := records.(headRecords)
	switch {
	case over && d.Mode == DeliveryTruncate:
		out = o.truncateInline([]ResultSet{set}, &l, 0)
	case lost:
		out = o.fallback(ctx, set, tokens, "", head.lost)
		out.kept = []int{out.Kept}
	default:
		out, err = o.offloadSections(ctx, []ResultSet{set}, &l, 0)
		if err != nil {
			o.logf(ctx, slog.LevelWarn, "lro: result not offloaded", call.Tool, err)
		}
	}
	if err != nil || out.Action == Inline {
		if !promised {
			return res, false, nil
		}
		// The handler returned a placeholder, trusting Collect: send
		// the collected records instead, complete.
		return Result{Content: []Content{TextContent(string(l.sections[0].cut(records.count())))}}, true, nil
	}
	if len(res.Content) == 0 {
		res.Content = []Content{{}}
	}
	res.Structured = nil
	return o.respond(res, doc, &l, out, call, d, set), true, nil
}

// keptTokens estimates the items that stay beside the document: small
// texts next to the data. Images and other items are not counted.
func (o *Offloader) keptTokens(res Result, doc document) int {
	t := 0
	idx, _ := textItems(res)
	for _, i := range idx {
		if !slices.Contains(doc.replace, i) {
			t += o.EstimateTokens(bytesOf(res.Content[i].Text))
		}
	}
	return t
}

// respond builds the result to send: the descriptor (or the truncated
// document and its notice) in place of the document's first item and of
// the structured content, when they were part of it, followed by a
// resource link to each file and the preview the delivery asks for. Items
// that were not part of the document stay where they were. first is the
// set the descriptor's file holds.
func (o *Offloader) respond(res Result, doc document, l *layout, out Outcome, call Call, d DeliveryChoice, first ResultSet) Result {
	var body []byte
	var r Result
	var after []Content
	switch out.Action {
	case Offloaded:
		var links []Content
		for _, f := range out.files {
			if link := o.linkFor(call, f); link != nil {
				links = append(links, Content{Link: link})
			}
		}
		var v any = out.Response
		if d.Mode == DeliveryCompact {
			v = o.compact(out.Response, call.NativeExtract, len(links) > 0, isLines(first))
		}
		b, err := marshalText(v)
		if err != nil {
			return Result{IsError: true, Content: []Content{TextContent("lro: encoding the descriptor: " + err.Error())}}
		}
		body = b
		if doc.structured {
			r.Structured = json.RawMessage(b)
		}
		after = links
		if p := o.preview(first, d.PreviewTokens); p != "" {
			after = append(after, TextContent(p))
		}
	case Truncated:
		if !l.items {
			body = l.truncated(out.kept)
			if doc.structured && l.root != nil {
				r.Structured = json.RawMessage(body)
			}
		}
		after = []Content{TextContent(out.Warning)}
		if out.Kept == 0 && first.count() > 0 {
			// Not even the first record fits: show it cut rather than
			// nothing at all.
			after = append(after, TextContent(o.cutFirst(first, o.EstimateTokens(bytesOf(out.Warning)))))
		}
	}
	placed := false
	kept := 0
	for i, c := range res.Content {
		if !slices.Contains(doc.replace, i) {
			r.Content = append(r.Content, c)
			continue
		}
		if l.items && out.Action == Truncated {
			if kept < out.kept[0] {
				r.Content = append(r.Content, c)
			}
			kept++
			continue
		}
		if !placed {
			r.Content = append(r.Content, TextContent(string(body)))
			placed = true
		}
	}
	r.Content = append(r.Content, after...)
	return r
}

// cutFirst returns the first record of set as the result sends it, cut to
// what fits the threshold beside a notice of notice tokens, and says so:
// what a truncated result shows when its first record alone is larger
// than the threshold.
func (o *Offloader) cutFirst(set ResultSet, notice int) string {
	budget := max(o.cfg.ThresholdTokens-o.overhead(set)-notice-40, 16) // and this note
	var out string
	_ = set.source().each(func(_ int, r *record) bool {
		n := len(r.sent)
		for n > 0 && o.opts.estimator.EstimateTokens(r.sent[:n]) > budget {
			n = min(n-1, n*budget/max(o.opts.estimator.EstimateTokens(r.sent[:n]), 1))
		}
		out = fmt.Sprintf("lro: the first record alone is larger than the threshold (%d bytes); its first %d bytes, cut:\n%s [cut]",
			len(r.sent), n, bytes.ToValidUTF8(r.sent[:n], nil))
		return false
	})
	return out
}

// warnIfLarge logs, once per tool, that a result over the threshold went
// out inline, and why. A silent pass-through of 300 KB is the surprise
// that costs a newcomer an hour.
func (o *Offloader) warnIfLarge(ctx context.Context, tool string, res Result, why string) {
	if res.IsError || res.NeedsInput || tool == ExtractToolName {
		return
	}
	if _, done := o.warned.Load(tool + "\x00" + why); done || o.resultTokens(res) <= o.cfg.ThresholdTokens {
		return
	}
	o.warnOnce(ctx, tool, why)
}

// warnOnce logs, once per tool and reason, that a result over the
// threshold of tool was sent inline because it: why.
func (o *Offloader) warnOnce(ctx context.Context, tool, why string) {
	if _, loaded := o.warned.LoadOrStore(tool+"\x00"+why, true); loaded {
		return
	}
	o.logger().LogAttrs(ctx, slog.LevelWarn, "lro: tool "+tool+" sent a result over the threshold inline: it "+why,
		slog.String("tool", tool), slog.Int("threshold_tokens", o.cfg.ThresholdTokens))
}

// resultTokens estimates a result as Serve would judge it.
func (o *Offloader) resultTokens(res Result) int {
	if o.surelySmall(res) {
		return 0
	}
	doc, _ := o.documentOf(res)
	return doc.tokens
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
