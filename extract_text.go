package lro

import (
	"context"
	"fmt"
	"strings"
)

// extractText answers the grep and lines modes of lro_extract: the
// offloaded file's own lines, as grep -n and sed -n print them (line 1 is
// the header), bounded like every result of the tool. They read any
// offloaded file, memories, records or the lines of a text, in one
// streaming pass with RE2, whose time is linear in the file: they need
// no worker.
func (o *Offloader) extractText(ctx context.Context, call extractCall, f *offloadFile) (string, error) {
	lim := textLimits{Budget: 4 * o.cfg.ThresholdTokens, MaxLine: maxTextLine}
	if call.lines != "" {
		rng, err := parseLineRange(call.lines)
		if err != nil {
			return "", err
		}
		out, err := readLines(ctx, f.f, rng, false, lim)
		if err != nil {
			return "", err
		}
		if out.Shown == 0 {
			return fmt.Sprintf("[lro_extract: no lines in %s: the file has %d lines]\n", rng, out.Lines), nil
		}
		return out.Text, nil
	}
	q := grepQuery{Pattern: call.grep, IgnoreCase: call.ignoreCase, Before: call.context, After: call.context}
	out, err := grepLines(ctx, f.f, q, lim)
	if err != nil {
		return "", err
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
