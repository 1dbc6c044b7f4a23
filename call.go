package lro

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/mcplro/lro/host"
)

// Serve runs next, the tool's handler, with offloading: the host-neutral
// core of every adapter ([Offloader.Middleware] for mcp-go, package gosdk
// for the official SDK). next must pass on the context it is given, which
// carries the collector of [Collect].
//
// When replaced is false the handler's own result goes out unchanged, and
// the returned Result is only a view of it; when true, the returned Result
// is what to send instead: a descriptor, a truncated result with a warning,
// a result cut at the gate, or a tool error (an invalid detail argument).
// A handler error is returned as it is.
//
// Every answer of a tool the library judges leaves through one gate (see
// [Host.Bound]): whatever the handler returned (a tool error, a result
// that asks for input, a page with a cursor) and whatever failed on the
// way (a write, the store, the quota), the answer is at most
// Config.ThresholdTokens + [NoticeTokens], except a pointer to offloaded
// files, whose size does not grow with the result. Unjudged, and so
// passed as they are: the results of a tool without a policy (logged once
// when large; give it one with [WithTool] or [WithAnyTool]), of a tool
// whose policy sets SkipOutputSchema and that declares an output schema,
// every result when offloading is disabled, and those for a proxy client,
// which judges them on its side.
func (h Host) Serve(ctx context.Context, call host.Call, next func(context.Context) (host.Result, error)) (res host.Result, replaced bool, err error) {
	o := h.o
	policy, ok := o.policyFor(call.Tool)
	if !ok && o.cfg.IsEnabled() && !call.FromProxy {
		res, err = next(ctx)
		if err == nil {
			o.warnIfLarge(ctx, call.Tool, res, fmt.Sprintf("has no offload policy, so its large results pass inline: the server gives it one with lro.WithTool(%q, lro.ToolPolicy{Generic: true}) or lro.WithAnyTool (lro-proxy judges every remote tool unless -memory-tools-only)", call.Tool))
		}
		return res, false, err
	}
	return o.serveWith(ctx, call, policy, next)
}

// serveWith is Serve under policy, whatever the tools configured.
func (o *engine) serveWith(ctx context.Context, call host.Call, policy ToolPolicy, next func(context.Context) (host.Result, error)) (host.Result, bool, error) {
	if !o.cfg.IsEnabled() {
		res, err := next(ctx)
		return res, false, err
	}
	if call.FromProxy {
		return o.serveProxy(ctx, next)
	}
	var v verdict
	res, replaced, err := o.serve(ctx, call, policy, next, &v)
	if err != nil || v.pointer || v.unjudged {
		return res, replaced, err
	}
	if b, cut := o.gate(res); cut {
		o.logf(ctx, slog.LevelWarn, "lro: an answer over the threshold was cut at the gate", call.Tool, nil)
		return b, true, nil
	}
	return res, replaced, nil
}

// A verdict is what serve tells the gate of an answer it returns besides
// the answer: it points to offloaded files, whose size does not grow with
// the result, or the tool's policy keeps its results unjudged.
type verdict struct {
	pointer  bool
	unjudged bool
}

func (o *engine) serve(ctx context.Context, call host.Call, policy ToolPolicy, next func(context.Context) (host.Result, error), v *verdict) (host.Result, bool, error) {
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
			return host.Result{IsError: true, Content: []host.Content{host.TextContent(msg)}}, true, nil
		}
	}
	if call.OutputSchema && policy.SkipOutputSchema {
		v.unjudged = true
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

	col, cerr := c.collected()
	if cerr != nil {
		o.logf(ctx, slog.LevelWarn, "lro: collected records cannot be offloaded", call.Tool, cerr)
		return res, false, nil
	}
	if col != nil {
		return o.serveCollected(ctx, call, delivery, res, set, col, v)
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
		o.warnOnce(ctx, call.Tool, "returned a page with an active cursor ("+l.cursor+") without handing its full set to lro.Collect, so the page is sent inline, cut to the records that fit: offloading one page would hide the others. Call lro.Collect(ctx, allRecords, scores) in the handler to offload the full set")
		if set.force {
			return res, false, nil
		}
	}
	set.preamble = string(doc.preamble)
	beside := o.keptTokens(res, doc)
	sets := o.sectionSets(set, &l, doc.tokens, beside, policy, call.Tool)
	rp := reply{call: call, res: res, doc: doc, l: &l, delivery: delivery(), first: sets[0]}
	if rp.delivery.Mode == DeliveryTruncate || l.cursor != "" {
		return o.respond(rp, o.truncateInline(sets, &l, beside)), true, nil
	}
	if c := o.opts.dir.resultCap(); c > 0 && doc.size() > c {
		err := fmt.Errorf("%w: it is %d bytes and the cap is %d", ErrResultTooLarge, doc.size(), c)
		return o.respond(rp, o.truncated(ctx, sets, &l, beside, "", err, 0)), true, nil
	}
	out, err := o.offload(ctx, sets, &l, beside)
	if err != nil {
		o.logf(ctx, slog.LevelWarn, "lro: result not offloaded", call.Tool, err)
		return res, false, nil
	}
	if out.Action == Inline {
		return res, false, nil
	}
	v.pointer = out.Action == Offloaded
	return o.respond(rp, out), true, nil
}

// serveProxy serves a proxy client, which offloads on its own side: it
// gets the result inline, and, when the handler handed a set over the
// threshold to Collect, the full set in place of the handler's rendering
// of it (a budgeted text, one page), so that the proxy judges and offloads
// what a direct client would have had offloaded.
func (o *engine) serveProxy(ctx context.Context, next func(context.Context) (host.Result, error)) (host.Result, bool, error) {
	c := &collector{o: o, threshold: o.cfg.ThresholdTokens}
	defer c.discard()
	res, err := next(context.WithValue(ctx, collectorKey{}, c))
	if err != nil || res.IsError || res.NeedsInput {
		return res, false, err
	}
	col, cerr := c.collected()
	if cerr != nil || col == nil || col.tokens <= o.cfg.ThresholdTokens {
		return res, false, nil
	}
	var b bytes.Buffer
	b.WriteByte('[')
	err = col.records.each(func(i int, r *record) bool {
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
	return host.Result{Content: []host.Content{host.TextContent(b.String())}}, true, nil
}

// sessionBudgeted reports whether call counts against a session budget.
func (o *engine) sessionBudgeted(call host.Call) bool {
	return o.cfg.SessionBudgetTokens > 0 && call.Session != ""
}

// serveCollected offloads the set a handler handed to Collect.
func (o *engine) serveCollected(ctx context.Context, call host.Call, delivery func() DeliveryChoice, res host.Result, set ResultSet, col *collection, v *verdict) (host.Result, bool, error) {
	records, tokens := col.records, col.tokens
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
		out = o.truncated(ctx, []ResultSet{set}, nil, 0, "", head.lost, 0)
	default:
		out, err = o.offload(ctx, []ResultSet{set}, &l, 0)
		if err != nil {
			o.logf(ctx, slog.LevelWarn, "lro: result not offloaded", call.Tool, err)
		}
	}
	if err != nil || out.Action == Inline {
		if !col.promised {
			return res, false, nil
		}
		// The handler returned a placeholder, trusting Collect: send
		// the collected records instead, complete.
		return host.Result{Content: []host.Content{host.TextContent(string(l.sections[0].cut(records.count())))}}, true, nil
	}
	if len(res.Content) == 0 {
		res.Content = []host.Content{{}}
	}
	res.Structured = nil
	v.pointer = out.Action == Offloaded
	return o.respond(reply{call: call, res: res, doc: doc, l: &l, delivery: d, first: set}, out), true, nil
}

// keptTokens estimates the items that stay beside the document: small
// texts next to the data. Images and other items are not counted.
func (o *engine) keptTokens(res host.Result, doc document) int {
	t := 0
	idx, _ := textItems(res)
	for _, i := range idx {
		if !slices.Contains(doc.replace, i) {
			t += o.EstimateTokens(bytesOf(res.Content[i].Text))
		}
	}
	return t
}

// A reply is what the result a call sends is built from, besides the
// Outcome: the handler's result, the document found in it and its layout,
// the delivery chosen, and first, the set the descriptor's file holds.
type reply struct {
	call     host.Call
	res      host.Result
	doc      document
	l        *layout
	delivery DeliveryChoice
	first    ResultSet
}

// respond builds the result to send: the descriptor (or the truncated
// document and its notice) in place of the document's first item and of
// the structured content, when they were part of it, followed by a
// resource link to each file and the preview the delivery asks for. Items
// that were not part of the document stay where they were.
func (o *engine) respond(rp reply, out Outcome) host.Result {
	var body []byte
	var r host.Result
	var after []host.Content
	switch out.Action {
	case Offloaded:
		var links []host.Content
		for _, f := range out.files {
			if link := o.linkFor(rp.call, f); link != nil {
				links = append(links, host.Content{Link: link})
			}
		}
		var v any = out.Response
		if rp.delivery.Mode == DeliveryCompact {
			v = o.compact(out.Response, rp.call.NativeExtract, len(links) > 0, isLines(rp.first))
		}
		b, err := marshalText(v)
		if err != nil {
			return host.Result{IsError: true, Content: []host.Content{host.TextContent("lro: encoding the descriptor: " + err.Error())}}
		}
		body = b
		if rp.doc.structured {
			r.Structured = json.RawMessage(b)
		}
		after = links
		if p := o.preview(rp.first, rp.delivery.PreviewTokens); p != "" {
			after = append(after, host.TextContent(p))
		}
	case Truncated:
		if !rp.l.items {
			body = rp.l.truncated(out.kept)
			if rp.doc.structured && rp.l.root != nil {
				r.Structured = json.RawMessage(body)
			}
		}
		after = []host.Content{host.TextContent(out.Warning)}
		if out.Kept == 0 && rp.first.count() > 0 {
			// Not even the first record fits: show it cut rather than
			// nothing at all, when it is at hand (a stream whose spool
			// failed kept only the records that fit).
			if cut := o.cutFirst(rp.first, o.EstimateTokens(bytesOf(out.Warning))); cut != "" {
				after = append(after, host.TextContent(cut))
			}
		}
	}
	placed := false
	kept := 0
	for i, c := range rp.res.Content {
		if !slices.Contains(rp.doc.replace, i) {
			r.Content = append(r.Content, c)
			continue
		}
		if rp.l.items && out.Action == Truncated {
			if kept < out.kept[0] {
				r.Content = append(r.Content, c)
			}
			kept++
			continue
		}
		if !placed {
			placed = true
			if len(body) == 0 && out.Action == Truncated {
				continue // no line of a text fits: its first, cut, follows
			}
			r.Content = append(r.Content, host.TextContent(string(body)))
		}
	}
	r.Content = append(r.Content, after...)
	return r
}

// cutFirst returns the first record of set as the result sends it, cut to
// what fits the threshold beside a notice of notice tokens, and says so:
// what a truncated result shows when its first record alone is larger
// than the threshold.
func (o *engine) cutFirst(set ResultSet, notice int) string {
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
func (o *engine) warnIfLarge(ctx context.Context, tool string, res host.Result, why string) {
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
func (o *engine) warnOnce(ctx context.Context, tool, why string) {
	if _, loaded := o.warned.LoadOrStore(tool+"\x00"+why, true); loaded {
		return
	}
	o.logger().LogAttrs(ctx, slog.LevelWarn, "lro: tool "+tool+" sent a result over the threshold inline: it "+why,
		slog.String("tool", tool), slog.Int("threshold_tokens", o.cfg.ThresholdTokens))
}

// resultTokens estimates a result as Serve would judge it.
func (o *engine) resultTokens(res host.Result) int {
	if o.surelySmall(res) {
		return 0
	}
	doc, _ := o.documentOf(res)
	return doc.tokens
}

// logger returns the configured logger, or slog's default one: for the
// notices that are never silent (see [WithLogger]), and only for them;
// events go to the configured logger alone.
func (o *engine) logger() *slog.Logger {
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

func (o *engine) logf(ctx context.Context, level slog.Level, msg, tool string, err error) {
	if l := o.opts.logger; l != nil {
		l.LogAttrs(ctx, level, msg, slog.String("tool", tool), slog.Any("error", err))
	}
}
