package lro

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/records"
)

// Host is the face of an Offloader that a host adapter uses: the code that
// translates an MCP SDK's requests and results to the host-neutral
// [host.Call] and [host.Result] of package host and back, and registers the
// tools and resources (package gosdk, package proxy, or an adapter of
// another SDK). A server author needs none of it:
// mcpgo.ServerOption, gosdk.Install and the proxy call it.
//
// Its methods are safe for concurrent use, as the Offloader's are.
type Host struct{ o *Offloader }

// Host returns o's face for host adapters.
func (o *Offloader) Host() Host { return Host{o} }

// AdapterState returns the value the host adapter named by key keeps for
// this Offloader, made by init the first time it is asked for (when two
// first calls race, both get the one value kept). key is a value of a
// type of the adapter's own, as a context key is.
//
// An adapter made of functions that take the Offloader, as package mcpgo
// is, keeps here what separate calls share: the proxy sessions its hooks
// learn of, the task tools its wrappers serve. The engine cannot hold it
// typed without importing the adapter's SDK, which every program using
// lro would then link, and a package-level map keyed by Offloader would
// keep every Offloader alive; a slot lives and dies with its Offloader.
func (h Host) AdapterState(key any, init func() any) any {
	if v, ok := h.o.adapters.Load(key); ok {
		return v
	}
	v, _ := h.o.adapters.LoadOrStore(key, init())
	return v
}

// A subject is what the pipeline judges of one call's answer: the sets of
// records found in the handler's result, or the set it handed to Collect,
// with where they sit in the result.
type subject struct {
	res    host.Result // the handler's result
	doc    document    // the part of res the records are
	l      *records.Layout
	sets   []ResultSet // one, or one per section of the result
	beside int         // tokens of what stays beside the document
	over   bool        // over the threshold, or over the session budget
	cursor string      // a page's active cursor: never offloaded nor cut (pages.go)
	lost   error       // why a collected stream kept only its first records

	collected *collection // the set handed to Collect, when it was
}

// resultSubject finds the records of a handler's result, or returns nil
// when the result goes out as it is: small, not records, or a page under
// the threshold that the session budget would offload.
func (o *Offloader) resultSubject(ctx context.Context, call host.Call, policy ToolPolicy, res host.Result, set ResultSet, d *callDelivery) *subject {
	// Under a session budget every result is measured: one under the
	// threshold may still have to be offloaded.
	if o.surelySmall(res) && !o.sessionBudgeted(call) {
		return nil
	}
	doc, ok := o.documentOf(res)
	if !ok {
		return nil
	}
	if doc.tokens <= o.cfg.ThresholdTokens {
		if !o.mustOffload(call, doc.tokens, d) {
			return nil
		}
		set.force = true
	}
	l := doc.layoutOf(policy.RecordsField)
	if l.Cursor != "" && set.force {
		return nil // a page under the threshold goes out as it is
	}
	set.preamble = string(doc.preamble)
	beside := o.keptTokens(res, doc)
	return &subject{
		res: res, doc: doc, l: &l, beside: beside, over: true, cursor: l.Cursor,
		sets: o.sectionSets(set, &l, doc.tokens, beside, policy, call.Tool),
	}
}

// collectedSubject is the set a handler handed to Collect: the handler's
// own result is a rendering of it, or a placeholder, and all of it is
// replaced.
func (o *Offloader) collectedSubject(call host.Call, res host.Result, set ResultSet, col *collection, d *callDelivery) *subject {
	set.src, set.Tokens, set.Validated = col.records, col.tokens, true
	doc := document{replace: make([]int, len(res.Content))}
	for i := range doc.replace {
		doc.replace[i] = i
	}
	if len(res.Content) == 0 {
		doc.replace = []int{0}
	}
	if col.tokens <= o.cfg.ThresholdTokens && o.mustOffload(call, col.tokens, d) {
		set.force = true
	}
	s := &subject{
		res: res, doc: doc, sets: []ResultSet{set}, collected: col,
		l:    &records.Layout{Root: []byte("[]"), Sections: []records.Section{{Found: records.Found{Src: col.records}}}},
		over: col.tokens > o.cfg.ThresholdTokens || set.force,
	}
	if head, ok := col.records.(headRecords); ok {
		s.lost = head.lost
	}
	return s
}

// writeOut is the outcome of the modes that write a file: the file, or
// the fallback when the records cannot all be had (a stream whose spool
// failed) or the result is over the cap on results.
func (o *Offloader) writeOut(ctx context.Context, s *subject) (Outcome, error) {
	if s.lost != nil {
		return o.truncated(ctx, s.sets, nil, 0, "", s.lost, 0), nil
	}
	if c := o.opts.dir.resultCap(); c > 0 && s.doc.size() > c {
		err := fmt.Errorf("%w: it is %d bytes and the cap is %d", ErrResultTooLarge, s.doc.size(), c)
		return o.truncated(ctx, s.sets, s.l, s.beside, "", err, 0), nil
	}
	return o.offload(ctx, s.sets, s.l, s.beside)
}

// inline is the answer when nothing replaces the records: the handler's
// result; or, when the handler returned a placeholder trusting Collect,
// the collected records instead, complete.
func (s *subject) inline() (host.Result, bool, error) {
	if s.collected == nil || !s.collected.promised {
		return s.res, false, nil
	}
	return host.Result{Content: []host.Content{host.TextContent(string(s.l.Sections[0].Cut(s.sets[0].count())))}}, true, nil
}

// answer is the result the reply is built on: for a collected set, the
// handler's items without its structured content, which rendered the set.
func (s *subject) answer() host.Result {
	if s.collected == nil {
		return s.res
	}
	res := s.res
	if len(res.Content) == 0 {
		res.Content = []host.Content{{}}
	}
	res.Structured = nil
	return res
}

// sessionBudgeted reports whether call counts against a session budget.
func (o *Offloader) sessionBudgeted(call host.Call) bool {
	return o.cfg.SessionBudgetTokens > 0 && call.Session != ""
}

// keptTokens estimates the items that stay beside the document: small
// texts next to the data. Images and other items are not counted.
func (o *Offloader) keptTokens(res host.Result, doc document) int {
	t := 0
	idx, _ := textItems(res)
	for _, i := range idx {
		if !slices.Contains(doc.replace, i) {
			t += o.EstimateTokens(records.BytesOf(res.Content[i].Text))
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
	l        *records.Layout
	delivery delivery
	first    ResultSet
}

// respond builds the result to send: the descriptor (or the truncated
// document and its notice) in place of the document's first item and of
// the structured content, when they were part of it, followed by a
// resource link to each file and the preview the delivery asks for. Items
// that were not part of the document stay where they were.
func (o *Offloader) respond(rp reply, out Outcome) host.Result {
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
		b, err := records.MarshalText(rp.delivery.mode.pointer(o, out.Response, rp, len(links) > 0))
		if err != nil {
			return host.Result{IsError: true, Content: []host.Content{host.TextContent("lro: encoding the descriptor: " + err.Error())}}
		}
		body = b
		if rp.doc.structured {
			r.Structured = json.RawMessage(b)
		}
		after = links
		if p := o.preview(rp.first, rp.delivery.preview); p != "" {
			after = append(after, host.TextContent(p))
		}
	case Truncated:
		if !rp.l.Items {
			body = rp.l.Truncated(out.kept)
			if rp.doc.structured && rp.l.Root != nil {
				r.Structured = json.RawMessage(body)
			}
		}
		after = []host.Content{host.TextContent(out.Warning)}
		if out.Kept == 0 && rp.first.count() > 0 {
			// Not even the first record fits: show it cut rather than
			// nothing at all, when it is at hand (a stream whose spool
			// failed kept only the records that fit).
			if cut := o.cutFirst(rp.first, o.EstimateTokens(records.BytesOf(out.Warning))); cut != "" {
				after = append(after, host.TextContent(cut))
			}
		}
	}
	placed := false
	kept := 0
	for i, c := range rp.res.Content {
		if !slices.Contains(rp.doc.replace, i) {
			if c.Link != nil && out.Action == Offloaded {
				// A handler's link beside a pointer, which the gate does
				// not judge: its description is cut to a notice's size.
				if l, ok := o.linkWithin(c.Link, NoticeTokens); ok && l != c.Link {
					c = host.Content{Link: l}
				}
			}
			r.Content = append(r.Content, c)
			continue
		}
		if rp.l.Items && out.Action == Truncated {
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
func (o *Offloader) cutFirst(set ResultSet, notice int) string {
	budget := max(o.cfg.ThresholdTokens-o.overhead(set)-notice-40, 16) // and this note
	var out string
	_ = set.source().Each(func(_ int, r *records.Record) bool {
		n := len(r.Sent)
		for n > 0 && o.opts.estimator.EstimateTokens(r.Sent[:n]) > budget {
			n = min(n-1, n*budget/max(o.opts.estimator.EstimateTokens(r.Sent[:n]), 1))
		}
		out = fmt.Sprintf("lro: the first record alone is larger than the threshold (%d bytes); its first %d bytes, cut:\n%s [cut]",
			len(r.Sent), n, bytes.ToValidUTF8(r.Sent[:n], nil))
		return false
	})
	return out
}

// warnIfLarge logs, once per tool, that a result over the threshold went
// out inline, and why. A silent pass-through of 300 KB is the surprise
// that costs a newcomer an hour.
func (o *Offloader) warnIfLarge(ctx context.Context, tool string, res host.Result, why string) {
	if res.IsError || res.NeedsInput || tool == ExtractToolName {
		return
	}
	if _, done := o.warned.Load(tool + "\x00" + why); done || o.resultTokens(res) <= o.cfg.ThresholdTokens {
		return
	}
	o.warnOnce(ctx, tool, why)
}

// WarnIfLarge logs, once per tool and reason, that res, a result of tool
// that the adapter sent inline without offering it to [Host.Serve], is
// over the threshold, and why ("is a task tool whose handler is not
// wrapped: ..."). Errors, results that ask for input and lro_extract's
// results are never logged. It is for what an adapter sees pass beside
// Serve: mcp-go's task tools whose handlers are not wrapped.
func (h Host) WarnIfLarge(ctx context.Context, tool string, res host.Result, why string) {
	h.o.warnIfLarge(ctx, tool, res, why)
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
func (o *Offloader) resultTokens(res host.Result) int {
	if o.surelySmall(res) {
		return 0
	}
	doc, _ := o.documentOf(res)
	return doc.tokens
}

// logger returns the configured logger, or slog's default one: for the
// notices that are never silent (see [WithLogger]), and only for them;
// events go to the configured logger alone.
func (o *Offloader) logger() *slog.Logger {
	if o.opts.logger != nil {
		return o.opts.logger
	}
	return slog.Default()
}

func (o *Offloader) logf(ctx context.Context, level slog.Level, msg, tool string, err error) {
	if l := o.opts.logger; l != nil {
		l.LogAttrs(ctx, level, msg, slog.String("tool", tool), slog.Any("error", err))
	}
}
