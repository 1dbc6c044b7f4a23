package lro

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/mcplro/lro/internal/records"
)

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
func (o *engine) compact(r *OffloadResponse, native, linked, lines bool) *CompactResponse {
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
func (o *engine) preview(set ResultSet, budget int) string {
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

func (compactMode) outcome(ctx context.Context, o *engine, s *subject) (Outcome, error) {
	return o.writeOut(ctx, s)
}

func (compactMode) pointer(o *engine, r *OffloadResponse, rp reply, linked bool) any {
	return o.compact(r, rp.call.NativeExtract, linked, isLines(rp.first))
}

func (compactMode) pointerTokens(*engine) int { return compactBudgetTokens }

func (compactMode) previewTokens() int { return DefaultPreviewTokens }
