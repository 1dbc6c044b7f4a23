package lro

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/records"
)

// Delivery is how an offloaded result reaches the model.
type Delivery string

// The delivery modes.
const (
	// DeliveryDescriptor sends the specification's OffloadResponse: every
	// field, ten recipes. It is the default.
	DeliveryDescriptor Delivery = "descriptor"
	// DeliveryCompact sends a bare pointer and what a model needs to act
	// on it (a [CompactResponse]), with a short preview of the records.
	DeliveryCompact Delivery = "compact"
	// DeliveryTruncate writes no file: whole records go inline, with a
	// notice of how many were left out and how to narrow the call, as
	// many as fit the threshold together with the notice. It is for
	// clients that can follow nothing.
	DeliveryTruncate Delivery = "truncate"
)

// A deliveryMode is what one [Delivery] does with a result over the
// threshold (or over the session budget): each mode is a value of its own
// file, registered in deliveryModes, and the pipeline asks the call's mode
// instead of testing which one it is.
type deliveryMode interface {
	// outcome judges the result s: a file and its descriptor, records cut
	// inline, or Inline.
	outcome(ctx context.Context, o *Offloader, s *subject) (Outcome, error)
	// pointer is what the answer carries in place of the records of an
	// offloaded result, whose descriptor is r; linked says resource links
	// go with it.
	pointer(o *Offloader, r *OffloadResponse, rp reply, linked bool) any
	// pointerTokens is about the size of that pointer: a result no larger
	// stays inline under the session budget, since offloading it would
	// save nothing.
	pointerTokens(o *Offloader) int
	// previewTokens is the preview budget when the choice leaves it 0.
	previewTokens() int
}

// deliveryModes are the modes, in the order ParseDelivery names them: a
// new mode is a file with its deliveryMode and one line here.
var deliveryModes = []struct {
	name Delivery
	mode deliveryMode
}{
	{DeliveryDescriptor, descriptorMode{}},
	{DeliveryCompact, compactMode{}},
	{DeliveryTruncate, truncateMode{}},
}

// modeOf returns the mode named d, or nil.
func modeOf(d Delivery) deliveryMode {
	for _, m := range deliveryModes {
		if m.name == d {
			return m.mode
		}
	}
	return nil
}

// ParseDelivery parses "descriptor", "compact" or "truncate".
func ParseDelivery(s string) (Delivery, error) {
	if modeOf(Delivery(s)) != nil {
		return Delivery(s), nil
	}
	names := make([]string, len(deliveryModes))
	for i, m := range deliveryModes {
		names[i] = strconv.Quote(string(m.name))
	}
	last := len(names) - 1
	return "", fmt.Errorf("lro: unknown delivery %q: want %s or %s", s, strings.Join(names[:last], ", "), names[last])
}

// A DeliveryRequest is what a [WithDelivery] function chooses from: the
// tool, the client, and what the server offers to follow a file with.
type DeliveryRequest struct {
	Tool   string
	Client host.ClientInfo
	// NativeExtract says the server serves lro_extract.
	NativeExtract bool
	// Resources says the server answers resources/read for offloaded
	// files, so that a resource link can be followed.
	Resources bool
	// Default is Config.Delivery.
	Default Delivery
}

// DeliveryChoice is how one offloaded result is delivered.
type DeliveryChoice struct {
	// Mode is the delivery mode; empty means Config.Delivery.
	Mode Delivery
	// PreviewTokens is the budget of the preview that rides along with
	// a file's pointer: the first records, as many as fit. 0 means the
	// mode's default (DefaultPreviewTokens for compact, none for
	// descriptor); negative means none. Truncate ignores it.
	PreviewTokens int
}

// WantsClientCapabilities reports whether a host adapter should fill
// Call.Client.Capabilities: only a [WithDelivery] function reads them, and
// encoding them on every call would cost for nothing.
func (h Host) WantsClientCapabilities() bool { return h.o.opts.delivery != nil }

// A delivery is the delivery of one call, decided once: its mode and
// the preview budget.
type delivery struct {
	mode    deliveryMode
	preview int
}

// A callDelivery is the delivery of a call's result, decided the first
// time it is needed and then the same: WithDelivery's function runs once
// a call, and only for a result over the threshold or the session budget
// (the budget may ask before the result is judged).
type callDelivery struct {
	o    *Offloader
	call host.Call
	once sync.Once
	d    delivery
}

// get returns the call's delivery, deciding it on first use.
func (c *callDelivery) get() delivery {
	c.once.Do(func() { c.d = c.o.deliveryFor(c.call) })
	return c.d
}

// deliveryFor chooses the delivery of an offloaded result of call.
func (o *Offloader) deliveryFor(call host.Call) delivery {
	c := DeliveryChoice{Mode: o.cfg.Delivery}
	if choose := o.opts.delivery; choose != nil {
		got := choose(DeliveryRequest{Tool: call.Tool, Client: call.Client, NativeExtract: call.NativeExtract, Resources: call.Resources, Default: o.cfg.Delivery})
		if modeOf(got.Mode) != nil {
			c.Mode = got.Mode
		}
		c.PreviewTokens = got.PreviewTokens
	}
	mode := modeOf(c.Mode)
	if mode == nil { // Config.Validate refuses it: never, but never a nil mode either
		mode = descriptorMode{}
	}
	if c.PreviewTokens == 0 {
		c.PreviewTokens = mode.previewTokens()
	}
	return delivery{mode: mode, preview: c.PreviewTokens}
}

// descriptorMode is [DeliveryDescriptor], the default: the
// specification's descriptor, every field and ten recipes.
type descriptorMode struct{}

func (descriptorMode) outcome(ctx context.Context, o *Offloader, s *subject) (Outcome, error) {
	return o.writeOut(ctx, s)
}

func (descriptorMode) pointer(_ *Offloader, r *OffloadResponse, _ reply, _ bool) any { return r }

func (descriptorMode) pointerTokens(*Offloader) int { return descriptorBudgetTokens }

func (descriptorMode) previewTokens() int { return 0 }

// linkFor returns the resource link of an offloaded file, or nil when
// the server handling call does not answer resources/read.
func (o *Offloader) linkFor(call host.Call, f offloadedFile) *host.ResourceLink {
	if !call.Resources {
		return nil
	}
	return o.extractor.ResourceLink(f.path, f.bytes, f.lines)
}

// CompactResponse is what [DeliveryCompact] sends in place of an offloaded
// result: the paper's bare pointer, which did as well as the full
// descriptor, and what a model needs to act on it. It is a subset of
// [OffloadResponse], so a client that validates structured content
// against a widened output schema accepts it too.
type CompactResponse struct {
	Offloaded bool           `json:"offloaded"` // always true
	FilePath  string         `json:"file_path"`
	Summary   CompactSummary `json:"summary"`
	Guidance  string         `json:"guidance"` // one line
	// Sections are the result's other large fields, each in a file of
	// its own, when it had several: their path, count and file.
	Sections []SectionDescriptor `json:"sections,omitempty"`
}

// CompactSummary is the summary of a [CompactResponse].
type CompactSummary struct {
	Count           int    `json:"count"`
	EstimatedTokens int    `json:"estimated_tokens"`
	Operation       string `json:"operation"`
}

// compact returns the compact form of a descriptor. linked says the
// result carries a resource link the client can read.
func (o *Offloader) compact(r *OffloadResponse, native, linked, lines bool) *CompactResponse {
	c := &CompactResponse{
		Offloaded: true,
		FilePath:  r.FilePath,
		Summary:   CompactSummary{Count: r.Summary.Count, EstimatedTokens: r.Summary.EstimatedTokens, Operation: r.Summary.Operation},
		Guidance:  compactGuidance(native, linked, lines),
	}
	for _, s := range r.Sections {
		c.Sections = append(c.Sections, SectionDescriptor{Section: s.Section, Count: s.Count, FilePath: s.FilePath})
	}
	return c
}

// compactGuidance is the one line of guidance of a compact pointer: how
// to follow it with what the client has.
func compactGuidance(native, linked, lines bool) string {
	var b strings.Builder
	what := "one JSON record"
	if lines {
		what = `one {"line": text} record`
	}
	fmt.Fprintf(&b, "Line 1 of the file is a header, then %s per line; ", what)
	switch {
	case native && lines:
		b.WriteString("query it with lro_extract (grep, lines or a jq filter)")
	case native:
		b.WriteString("query it with lro_extract (a jq filter)")
	default:
		b.WriteString("extract what you need with tail -n +2 and jq")
	}
	if linked {
		b.WriteString(", or read the linked resource")
	}
	b.WriteString(".")
	return b.String()
}

// preview returns the text that rides along with a pointer: the first
// records, as many as fit budget tokens, and how many there are. A first
// record larger than the whole budget is shown cut, so that the model
// still sees what a record looks like.
func (o *Offloader) preview(set ResultSet, budget int) string {
	src := set.source()
	if budget <= 0 || src.Count() == 0 {
		return ""
	}
	var body bytes.Buffer
	shown, used := 0, 0
	_ = src.Each(func(i int, r *records.Record) bool {
		t := o.EstimateTokens(r.Line) + 1
		if used+t > budget {
			if i == 0 {
				n := min(len(r.Line), 4*budget)
				body.Write(bytes.ToValidUTF8(r.Line[:n], nil))
				body.WriteString(" [cut]\n")
			}
			return false
		}
		body.Write(r.Line)
		body.WriteByte('\n')
		used += t
		shown++
		return true
	})
	noun := "records"
	if isLines(set) {
		noun = "lines"
	}
	return fmt.Sprintf("Preview: the first %d of %d %s of the file (line 2 on); it holds them all.\n%s", max(shown, 1), src.Count(), noun, body.String())
}

// isLines reports whether set holds the lines of a text result.
func isLines(set ResultSet) bool {
	if records.IsText(set.src) {
		return true
	}
	return set.Generic && len(set.Records) > 0 && bytes.HasPrefix(set.Records[0], []byte(`{"line":`))
}

// compactMode is [DeliveryCompact]: a bare pointer (a [CompactResponse])
// and a preview of the first records.
type compactMode struct{}

func (compactMode) outcome(ctx context.Context, o *Offloader, s *subject) (Outcome, error) {
	return o.writeOut(ctx, s)
}

func (compactMode) pointer(o *Offloader, r *OffloadResponse, rp reply, linked bool) any {
	return o.compact(r, rp.call.NativeExtract, linked, isLines(rp.first))
}

func (compactMode) pointerTokens(*Offloader) int { return compactBudgetTokens }

func (compactMode) previewTokens() int { return DefaultPreviewTokens }

// truncateMode is [DeliveryTruncate]: no file; as many whole records as
// fit the threshold go inline, with a notice.
type truncateMode struct{}

// outcome cuts a result over the threshold; one under it (a collected set
// the session budget let through) is judged as the other modes judge it.
func (truncateMode) outcome(ctx context.Context, o *Offloader, s *subject) (Outcome, error) {
	if !s.over {
		return o.writeOut(ctx, s)
	}
	return o.truncateInline(s.sets, s.l, s.beside), nil
}

// pointer is never asked for: truncate points to no file.
func (truncateMode) pointer(_ *Offloader, r *OffloadResponse, _ reply, _ bool) any { return r }

// pointerTokens: truncation cannot make a result smaller than the
// threshold.
func (truncateMode) pointerTokens(o *Offloader) int { return o.cfg.ThresholdTokens }

func (truncateMode) previewTokens() int { return 0 }

// truncateInline is the response of DeliveryTruncate: as many leading
// records as fit the threshold, of each section, and a notice. No file
// is written.
func (o *Offloader) truncateInline(sets []ResultSet, l *records.Layout, beside int) Outcome {
	count, tokens := 0, 0
	for _, s := range sets {
		count += s.count()
		tokens += s.Tokens
	}
	// The notice goes out with the records, so its tokens come out of
	// their budget: sized with count in place of the number kept, which
	// has no more digits, it is never smaller than the notice sent.
	reserve := o.EstimateTokens([]byte(truncateNotice(count, count, tokens)))
	var kept []int
	if len(sets) == 1 {
		s := sets[0]
		kept = []int{o.leading(s.source(), o.cfg.ThresholdTokens-o.overhead(s)-reserve)}
	} else {
		kept = o.fit(l, beside+reserve)
	}
	n := 0
	for _, k := range kept {
		n += k
	}
	return Outcome{Action: Truncated, Tokens: tokens, Kept: n, Warning: truncateNotice(n, count, tokens), kept: kept}
}

// truncateNotice is the notice of a result cut to its first n of count
// records.
func truncateNotice(n, count, tokens int) string {
	return fmt.Sprintf("lro: this result is cut to its first %d of %d records (about %d tokens in all) to fit the context; "+
		"narrow the call (a filter, a smaller limit or a lower detail level) to see the others.", n, count, tokens)
}
