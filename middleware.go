package lro

// The host-neutral tool-result middleware: what every adapter calls with
// a tool call and its handler (mcpgo.Middleware, package gosdk, the
// proxy), and what it runs first. The judging of the answer it hands on
// (the subject, its outcome and the reply) is call.go's.

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/records"
)

// Serve runs next, the tool's handler, with offloading: the host-neutral
// core of every adapter (mcpgo.Middleware for mcp-go, package gosdk
// for the official SDK). next must pass on the context it is given, which
// carries the collector of [Collect].
//
// When replaced is false the handler's own result goes out unchanged, and
// the returned Result is only a view of it; when true, the returned Result
// is what to send instead: a descriptor, a truncated result with a warning,
// a result cut at the gate, or a tool error (an invalid detail argument,
// or a handler error too large for the bound, cut). A handler error within
// the bound is returned as it is.
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

// ServeWith is [Host.Serve] under policy, whatever the Offloader's
// configured tools: for an adapter that wraps handlers one by one under a
// policy of its own (mcpgo.Wrap, the proxy's remote tools).
func (h Host) ServeWith(ctx context.Context, call host.Call, policy ToolPolicy, next func(context.Context) (host.Result, error)) (res host.Result, replaced bool, err error) {
	return h.o.serveWith(ctx, call, policy, next)
}

// serveWith is Serve under policy, whatever the tools configured.
func (o *Offloader) serveWith(ctx context.Context, call host.Call, policy ToolPolicy, next func(context.Context) (host.Result, error)) (host.Result, bool, error) {
	if !o.cfg.IsEnabled() {
		res, err := next(ctx)
		return res, false, err
	}
	if call.FromProxy {
		return o.serveProxy(ctx, next)
	}
	var v verdict
	var meta any // the handler's _meta, which every answer judged counts
	res, replaced, err := o.serve(ctx, call, policy, metaOf(next, &meta), &v)
	if v.unjudged || err != nil && v.pointer {
		return res, replaced, err
	}
	if v.pointer {
		return o.pointerMeta(res, meta), replaced, err
	}
	if replaced {
		res.Meta = meta
	}
	if err != nil {
		// A handler's error becomes a JSON-RPC error whose message the
		// model reads: over the bound, a tool error cut at the gate.
		e := host.Result{IsError: true, Content: []host.Content{host.TextContent(err.Error())}}
		b, cut := o.gate(e)
		if !cut {
			return res, replaced, err
		}
		o.logf(ctx, slog.LevelWarn, "lro: a handler's error over the threshold was cut at the gate", call.Tool, nil)
		return b, true, nil
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

func (o *Offloader) serve(ctx context.Context, call host.Call, policy ToolPolicy, next func(context.Context) (host.Result, error), v *verdict) (host.Result, bool, error) {
	detail, refused := detailOf(call, policy)
	if refused != nil {
		return *refused, true, nil
	}
	if call.OutputSchema && policy.SkipOutputSchema {
		v.unjudged = true
		res, err := next(ctx)
		if err == nil {
			o.warnIfLarge(ctx, call.Tool, res, "declares an output schema and its policy has SkipOutputSchema, so it is not offloaded")
		}
		return res, false, err
	}
	ctx = extract.WithNative(ctx, call.NativeExtract)

	c := &collector{o: o, threshold: o.cfg.ThresholdTokens}
	defer c.discard()
	res, err := next(context.WithValue(ctx, collectorKey{}, c))
	if err != nil || res.IsError || res.NeedsInput {
		return res, false, err
	}
	d := &callDelivery{o: o, call: call}
	set := ResultSet{Operation: policy.operationFor(call.Tool), Detail: detail, Generic: policy.Generic}
	if q, ok := call.Arguments["query"].(string); ok {
		set.Query = &q
	}

	col, cerr := c.collected()
	if cerr != nil {
		o.logf(ctx, slog.LevelWarn, "lro: collected records cannot be offloaded", call.Tool, cerr)
		return res, false, nil
	}
	var s *subject
	if col != nil {
		s = o.collectedSubject(call, res, set, col, d)
	} else if s = o.resultSubject(ctx, call, policy, res, set, d); s == nil {
		return res, false, nil
	} else if s.cursor != "" {
		return o.pageRefused(ctx, call, s), true, nil
	}
	stop := reportOffload(ctx, call.Tool)
	out, err := d.get().mode.outcome(withTool(ctx, call.Tool), o, s)
	stop()
	if err != nil {
		o.logf(ctx, slog.LevelWarn, "lro: result not offloaded", call.Tool, err)
	}
	if err != nil || out.Action == Inline {
		return s.inline()
	}
	v.pointer = out.Action == Offloaded
	if col != nil && v.pointer {
		o.noteCollectedPage(ctx, call, col.records.Count())
	}
	sent := o.respond(reply{call: call, res: s.answer(), doc: s.doc, l: s.l, delivery: d.get(), first: s.sets[0]}, out)
	if v.pointer {
		o.metrics.keptOut(withTool(ctx, call.Tool), s.sets[0].Operation, out.Tokens, o.sentTokens(sent))
	}
	return sent, true, nil
}

// serveProxy serves a proxy client, which offloads on its own side: it
// gets the result inline, and, when the handler handed a set over the
// threshold to Collect, the full set in place of the handler's rendering
// of it (a budgeted text, one page), so that the proxy judges and offloads
// what a direct client would have had offloaded.
func (o *Offloader) serveProxy(ctx context.Context, next func(context.Context) (host.Result, error)) (host.Result, bool, error) {
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
	err = col.records.Each(func(i int, r *records.Record) bool {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(r.Line)
		return true
	})
	if err != nil {
		return res, false, nil
	}
	b.WriteByte(']')
	return host.Result{Content: []host.Content{host.TextContent(b.String())}}, true, nil
}
