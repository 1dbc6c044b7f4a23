package lro

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/records"
)

// NoticeTokens is the most tokens, as the Offloader's estimator counts
// them, that an answer leaving the library may hold beyond
// Config.ThresholdTokens: the gate's notice that it cut the answer, with
// the marker at the cut, or a notice of the library's own (a fallback's
// warning). Every answer of a tool the library judges is at most
// ThresholdTokens + NoticeTokens, whatever the handler returned and
// whatever failed on the way; a pointer to an offloaded file is the one
// exception, as its size does not grow with the result (see [Host.Serve]).
const NoticeTokens = 128

// gate is the exit of every answer the library judges: an answer within
// the threshold and NoticeTokens goes out as it is; a larger one is cut
// to the threshold, text item by text item, the one cut ending with a
// marker, and followed by a notice of what was left out. Items that are
// not text (images, audio, binary resources) are not estimated and stay;
// structured content over the bound is left out, and the answer then
// becomes a tool error, so that a client that validates structured
// content against the tool's output schema still accepts it. It reports
// whether it changed res.
func (o *Offloader) gate(res host.Result) (host.Result, bool) {
	s := structuredJSON(res.Structured)
	m := structuredJSON(res.Meta)
	if o.surelyWithin(res, s, m) {
		return res, false
	}
	texts, structured := o.answerTokens(res, s)
	meta := o.metaTokens(m)
	bound := o.cfg.ThresholdTokens + NoticeTokens
	if texts+structured+meta <= bound {
		return res, false
	}
	if m != nil {
		// A server's _meta is not the model's content: it goes first,
		// whole, and the answer is judged without it.
		res = withoutMeta(res)
		if note := metaNote(meta, o.cfg.ThresholdTokens); texts+structured+o.EstimateTokens([]byte(note)) <= bound {
			res.Content = append(res.Content[:len(res.Content):len(res.Content)], host.TextContent(note))
			return res, true
		}
	}
	return o.cut(res, s, texts+structured+meta, structured > 0, m != nil), true
}

// metaTokens estimates a result's _meta, m as JSON, as a client receives
// it: its JSON and its member's name.
func (o *Offloader) metaTokens(m []byte) int {
	if m == nil {
		return 0
	}
	return o.EstimateTokens(m) + 4
}

// withoutMeta returns res without its _meta.
func withoutMeta(res host.Result) host.Result {
	res.Meta = nil
	return res
}

// metaNote says that a result's _meta of about tokens tokens was left
// out, in at most NoticeTokens.
func metaNote(tokens, threshold int) string {
	return fmt.Sprintf("lro: the result's _meta (about %d tokens) was left out: with it this answer is over the threshold of %d tokens. A server's _meta is not the model's content.", tokens, threshold)
}

// metaOf is next, noting the _meta of the result it returns in meta.
func metaOf(next func(context.Context) (host.Result, error), meta *any) func(context.Context) (host.Result, error) {
	return func(ctx context.Context) (host.Result, error) {
		res, err := next(ctx)
		*meta = res.Meta
		return res, err
	}
}

// pointerMeta gives res, a pointer to offloaded files, the handler's
// _meta m when it fits beside it within the threshold and NoticeTokens;
// otherwise res goes without it, with a note (a pointer is the one answer
// the bound does not hold to, as its size does not grow with the result:
// a _meta does).
func (o *Offloader) pointerMeta(res host.Result, m any) host.Result {
	b := structuredJSON(m)
	if b == nil {
		return res
	}
	texts, structured := o.answerTokens(res, structuredJSON(res.Structured))
	meta := o.metaTokens(b)
	if texts+structured+meta <= o.cfg.ThresholdTokens+NoticeTokens {
		res.Meta = m
		return res
	}
	res.Meta = nil
	res.Content = append(res.Content[:len(res.Content):len(res.Content)], host.TextContent(metaNote(meta, o.cfg.ThresholdTokens)))
	return res
}

// surelyWithin reports, without estimating, that an answer whose
// structured content is s and _meta m is within the threshold: its bytes
// together are few enough for the heuristic estimator's bound.
func (o *Offloader) surelyWithin(res host.Result, s, m []byte) bool {
	size := len(s) + len(m)
	for _, c := range res.Content {
		switch {
		case c.Link != nil:
			size += len(c.Link.URI) + len(c.Link.Name) + len(c.Link.Title) + len(c.Link.Description) + len(c.Link.MIMEType)
		case c.Judged():
			size += len(c.Text)
		}
	}
	return o.surelyUnder(size, func() bool {
		valid := utf8.Valid(s) && utf8.Valid(m)
		for _, c := range res.Content {
			valid = valid && (!c.Judged() || utf8.ValidString(c.Text))
		}
		return valid
	})
}

// answerTokens estimates what a client receives of an answer res whose
// structured content is s: its text items, resource links and structured
// content. The structured content counts once with a text item that is
// its serialization, as the threshold counts a result set once when it is
// sent twice; otherwise it counts on its own (structured is then its
// part).
func (o *Offloader) answerTokens(res host.Result, s []byte) (texts, structured int) {
	repeated := false
	for _, c := range res.Content {
		switch {
		case c.Link != nil:
			texts += o.linkTokens(c.Link)
		case c.Judged():
			texts += o.EstimateTokens(records.BytesOf(c.Text))
			repeated = repeated || s != nil && bytes.Equal(bytes.TrimSpace(records.BytesOf(c.Text)), bytes.TrimSpace(s))
		}
	}
	if s != nil && !repeated {
		structured = o.EstimateTokens(s)
	}
	return texts, structured
}

// linkTokens estimates a resource link as a client receives it.
func (o *Offloader) linkTokens(l *host.ResourceLink) int {
	return o.EstimateTokens(records.BytesOf(l.URI+l.Name+l.Title+l.Description+l.MIMEType)) + 16 // and its field names
}

// linkWithin returns l as it fits within budget tokens: l itself, or a
// copy with its title and description cut and marked (a handler's link
// may describe a resource at length); ok is false when not even its URI
// and name fit, and the link is left out.
func (o *Offloader) linkWithin(l *host.ResourceLink, budget int) (*host.ResourceLink, bool) {
	if o.linkTokens(l) <= budget {
		return l, true
	}
	c := *l
	c.Title, c.Description = "", ""
	left := budget - o.linkTokens(&c)
	if left < 0 {
		return nil, false
	}
	if n := o.prefixWithin(l.Description, left-o.EstimateTokens([]byte(records.CutMarker))); n > 0 {
		c.Description = l.Description[:n] + records.CutMarker
	}
	return &c, true
}

// structuredJSON returns the structured content of a result as JSON, or
// nil when there is none or it cannot be encoded (the host cannot send
// it either).
func structuredJSON(v any) []byte {
	switch s := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return s
	case []byte:
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// cut returns res cut to the threshold: text items whole while they fit,
// the first that does not cut to what is left and marked, later ones left
// out; a notice of what was cut comes last. s is res's structured
// content as JSON, which is left out; hadStructured says it counted on
// its own (no text item repeats it): s then takes its place as a text
// item, cut like the others. metaDropped says the result's _meta was
// left out, which the notice says.
func (o *Offloader) cut(res host.Result, s []byte, tokens int, hadStructured, metaDropped bool) host.Result {
	// Structured content is left out: a result without it would fail a
	// client's check against the tool's output schema, so it becomes a
	// tool error, which clients do not check.
	dropped := s != nil
	out := host.Result{IsError: res.IsError || dropped, NeedsInput: res.NeedsInput}
	items := res.Content
	if hadStructured {
		items = append(items[:len(items):len(items)], host.TextContent(string(s)))
	}
	budget := o.cfg.ThresholdTokens
	shown, left, cutBytes, ofBytes := 0, 0, -1, 0
	for _, c := range items {
		if c.Link != nil {
			if l, ok := o.linkWithin(c.Link, budget); ok {
				if l != c.Link {
					c = host.Content{Link: l} // the adapter builds it anew
				}
				budget -= o.linkTokens(l)
				out.Content = append(out.Content, c)
			} else {
				left++
			}
			continue
		}
		if !c.Judged() {
			out.Content = append(out.Content, c) // not text: not judged
			continue
		}
		if cutBytes >= 0 || budget <= 0 {
			left++
			continue
		}
		t := o.EstimateTokens(records.BytesOf(c.Text))
		if t <= budget {
			budget -= t
			shown++
			out.Content = append(out.Content, c)
			continue
		}
		n := o.prefixWithin(c.Text, budget)
		cutBytes, ofBytes = n, len(c.Text)
		// An embedded resource cut becomes a text item: its host value
		// holds the whole text.
		out.Content = append(out.Content, host.TextContent(c.Text[:n]+records.CutMarker))
		budget = 0
	}
	out.Content = append(out.Content, host.TextContent(gateNotice(tokens, o.cfg.ThresholdTokens, shown, left, cutBytes, ofBytes, dropped, metaDropped)))
	return out
}

// prefixWithin returns the length of the longest prefix of text, ending
// at a character boundary, that the estimator puts within budget tokens
// (or near it: the estimate is searched, not inverted). No rune costs
// less than an eighth of a token a byte, so the search starts at most
// eight bytes a token in.
func (o *Offloader) prefixWithin(text string, budget int) int {
	n := min(len(text), 8*budget+8)
	for n > 0 {
		for n > 0 && n < len(text) && !utf8.RuneStart(text[n]) {
			n--
		}
		t := o.EstimateTokens(records.BytesOf(text[:n]))
		if t <= budget {
			return n
		}
		n = min(n-1, n*budget/t)
	}
	return 0
}

// gateNotice says what the gate cut, in at most NoticeTokens with the
// marker: its numbers have at most 20 digits each.
func gateNotice(tokens, threshold, shown, dropped, cutBytes, ofBytes int, structured, meta bool) string {
	what := fmt.Sprintf("%d text items shown whole", shown)
	if cutBytes >= 0 {
		what += fmt.Sprintf(", the next cut to its first %d of %d bytes", cutBytes, ofBytes)
	}
	if dropped > 0 {
		what += fmt.Sprintf(", %d left out", dropped)
	}
	if structured {
		what += ", structured content left out"
	}
	if meta {
		what += ", _meta left out"
	}
	return fmt.Sprintf("lro: this answer (about %d tokens) is over the threshold of %d tokens and could not be offloaded, so it is cut: %s. Narrow the call to see the rest.",
		tokens, threshold, what)
}

// Bound is the gate for the answers a host relays without [Host.Serve]:
// the proxy's answers that it cannot hand to a tool's handler (an error,
// a result that asks for input, one whose content it cannot read). It
// returns res when res is within Config.ThresholdTokens + [NoticeTokens]
// as the Offloader's estimator counts it (text items, resource links and
// structured content, the latter once when a text item is its
// serialization), or when offloading is disabled. Otherwise it returns
// res cut to that bound: text items whole while they fit, the first that
// does not cut and marked " …[cut]", later ones left out, and a last text
// item that says what was cut; structured content counted on its own is
// left out (its JSON cut as a text item), and the answer is then a tool
// error. Items that are not text (images, audio, binary resources) are
// not counted and stay as they are: a host hands over an item it cannot
// read as a text item of its JSON, to be bounded. Bound does not offload:
// an answer to offload goes through Serve.
func (h Host) Bound(ctx context.Context, tool string, res host.Result) host.Result {
	o := h.o
	if !o.cfg.IsEnabled() {
		return res
	}
	b, cut := o.gate(res)
	if cut {
		o.logf(ctx, slog.LevelWarn, "lro: an answer over the threshold was cut at the gate", tool, nil)
	}
	return b
}
