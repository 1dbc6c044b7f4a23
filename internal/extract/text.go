package extract

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/textlines"
)

// extractText answers the grep and lines modes of lro_extract: lines of
// the offloaded file as grep -n and sed -n print them, bounded like every
// result of the tool. Line 1 is the first record, not the header; a text
// offloaded as its lines is read as that text (textlines.Body), so that a
// pattern matches the text's own line and line N is the text's line N,
// which the descriptor's recipes select by .line. They read any offloaded
// file, memories, records or the lines of a text, in one streaming pass
// with RE2. They run where jq queries run (a worker
// process, see [Limits]), by the same deadline: a pass is linear
// in the file, but a costly pattern takes microseconds a byte, so a line
// is matched in its first textlines.MaxMatch bytes only (the answer says
// when a line was), and the deadline bounds the whole file.
func (o *Tool) extractText(ctx context.Context, call extractCall, f *offloadFile, lim Limits, ticket *admit.Ticket) (string, error) {
	budget := 4 * o.env.ThresholdTokens
	req := &extractworker.Request{
		Path:   f.workerPath(o.env.FS),
		File:   f.id,
		Limits: lim.sandbox(),
		Text:   &extractworker.TextRequest{Lines: call.lines, Budget: budget, MaxLine: maxTextLine},
	}
	if call.lines != "" {
		rng, err := textlines.ParseRange(call.lines)
		if err != nil {
			return "", err
		}
		req.Text.Lines = rng.String() // as the answer names it
	} else {
		q := textlines.Query{Pattern: call.grep, IgnoreCase: call.ignoreCase, Before: call.context, After: call.context}
		if err := q.Check(); err != nil {
			return "", err
		}
		req.Query, req.Text.IgnoreCase, req.Text.Context = call.grep, call.ignoreCase, call.context
	}
	// The output and, in this process, the read buffers and the context
	// lines held.
	if err := ticket.Reserve(textReserve+2*int64(budget), lim.MaxCallBytes); err != nil {
		return "", err
	}
	src, err := o.fromStart(f)
	if err != nil {
		return "", err
	}
	defer src.Close()
	resp, err := o.runQuery(ctx, req, f, src, lim, ticket)
	if err != nil {
		return "", err
	}
	if resp.Failure != nil {
		return "", resp.Failure
	}
	if resp.Text == nil || len(resp.Values) != 1 {
		return "", fmt.Errorf("internal error: the worker's answer holds no text")
	}
	out := *resp.Text
	out.Text = string(resp.Values[0])
	if call.lines != "" {
		if out.Shown == 0 {
			return fmt.Sprintf("[lro_extract: no lines in %s: there are %d lines, the header not counted]\n", req.Text.Lines, out.Lines), nil
		}
		return out.Text, nil
	}
	var b strings.Builder
	b.WriteString(out.Text)
	switch {
	case out.Matches == 0:
		fmt.Fprintf(&b, "[lro_extract: no line matches; %d lines searched]\n", out.Lines)
	case out.MatchesShown < out.Matches:
		fmt.Fprintf(&b, "[lro_extract: showing %d of %d matching lines; narrow the pattern, or read a range with lines]\n", out.MatchesShown, out.Matches)
	}
	return b.String(), nil
}

// maxTextLine bounds one line that grep or lines shows: a record of a
// few KB is shown whole, a 1 MB line is cut with a note.
const maxTextLine = 4096

// textReserve is what a grep or lines call holds besides its output when
// it runs in this process: the read buffer, the part of a long line
// matched, and the context lines held (100 at most, each cut to
// maxTextLine).
const textReserve = textlines.BufSize + textlines.MaxMatch + textlines.MaxContext*maxTextLine

// textNoteSlack bounds the notes that a text output adds past its budget
// (each under 300 bytes).
const textNoteSlack = 4 << 10
