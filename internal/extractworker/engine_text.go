package extractworker

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcplro/lro/internal/jqsandbox"
	"github.com/mcplro/lro/internal/textlines"
)

// runText answers a Request.Text: grep or lines over the whole file, by
// its deadline. Its cost is bounded per line (textlines.MaxMatch) and its
// memory by the budget, so a deadline checked between lines stops it.
func runText(ctx context.Context, req *Request, in Input) *Response {
	timeout := req.Limits.Timeout
	if timeout <= 0 {
		timeout = jqsandbox.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := req.Text
	lim := textlines.Limits{Budget: t.Budget, MaxLine: t.MaxLine}
	var rng textlines.Range
	var q textlines.Query
	if t.Lines != "" {
		var err error
		if rng, err = textlines.ParseRange(t.Lines); err != nil {
			return &Response{Failure: &Failure{Kind: KindQuery, Message: err.Error()}}
		}
	} else {
		q = textlines.Query{Pattern: req.Query, IgnoreCase: t.IgnoreCase, Before: t.Context, After: t.Context}
		if err := q.Check(); err != nil {
			return &Response{Failure: &Failure{Kind: KindQuery, Message: err.Error()}}
		}
	}
	r, done, err := in.Open()
	if err != nil {
		return &Response{Failure: Describe(err, timeout)}
	}
	defer done()
	r = textlines.Body(r) // the records' lines, or a text's own
	var out textlines.Output
	if t.Lines != "" {
		out, err = textlines.ReadLines(ctx, r, rng, false, lim)
	} else {
		out, err = textlines.Grep(ctx, r, q, lim)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Response{Failure: TimeoutFailure(timeout)}
	case err != nil && ctx.Err() != nil: // a worker's CPU bound
		return &Response{Failure: Describe(context.Cause(ctx), timeout)}
	case err != nil:
		return &Response{Failure: &Failure{Kind: KindFile, Message: "reading the file: " + err.Error()}}
	}
	return &Response{Text: &out, Values: []json.RawMessage{json.RawMessage(out.Text)}}
}
