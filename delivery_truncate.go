package lro

import (
	"context"
	"fmt"

	"github.com/mcplro/lro/internal/records"
)

// truncateMode is [DeliveryTruncate]: no file; as many whole records as
// fit the threshold go inline, with a notice.
type truncateMode struct{}

// outcome cuts a result over the threshold; one under it (a collected set
// the session budget let through) is judged as the other modes judge it.
func (truncateMode) outcome(ctx context.Context, o *engine, s *subject) (Outcome, error) {
	if !s.over {
		return o.writeOut(ctx, s)
	}
	return o.truncateInline(s.sets, s.l, s.beside), nil
}

// pointer is never asked for: truncate points to no file.
func (truncateMode) pointer(_ *engine, r *OffloadResponse, _ reply, _ bool) any { return r }

// pointerTokens: truncation cannot make a result smaller than the
// threshold.
func (truncateMode) pointerTokens(o *engine) int { return o.cfg.ThresholdTokens }

func (truncateMode) previewTokens() int { return 0 }

// truncateInline is the response of DeliveryTruncate: as many leading
// records as fit the threshold, of each section, and a notice. No file
// is written.
func (o *engine) truncateInline(sets []ResultSet, l *records.Layout, beside int) Outcome {
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
