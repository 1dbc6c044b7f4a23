package lro

import (
	"context"
	"encoding/json"

	"github.com/mcplro/lro/host"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The savings an operator sees on the dashboard (lro.offload.tokens) are
// the tokens a result would have cost inline minus those of what was sent
// in its place: the descriptor, a preview, links. Counting the whole
// estimate would overstate them by every descriptor's own size.

// toolKey carries the name of the tool whose call is being served, so
// that the metrics of its offload name it.
type toolKey struct{}

func withTool(ctx context.Context, tool string) context.Context {
	return context.WithValue(ctx, toolKey{}, tool)
}

// toolOf returns the tool of the call being served, or "" outside one (a
// direct call of Offloader.Offload).
func toolOf(ctx context.Context) string {
	t, _ := ctx.Value(toolKey{}).(string)
	return t
}

// offloadAttrs are the attributes of an offload's counts: its operation,
// and its tool when it was served.
func offloadAttrs(ctx context.Context, operation string) []attribute.KeyValue {
	a := []attribute.KeyValue{attrOperation(operation)}
	if t := toolOf(ctx); t != "" {
		a = append(a, attribute.String("tool", t))
	}
	return a
}

// keptOut counts the tokens an offload kept out of the context: inline,
// the estimate of the whole result, less sent, the estimate of what went
// in its place. Nothing is counted when nothing was saved.
func (in *instruments) keptOut(ctx context.Context, operation string, inline, sent int) {
	if inline > sent {
		in.offloadTokens.Add(ctx, int64(inline-sent), metric.WithAttributes(offloadAttrs(ctx, operation)...))
	}
}

// sentTokens estimates the answer a client receives: its text items, or
// its structured content when that is larger. A tool that returns both
// sends the same thing twice, of which a client gives its model one.
func (o *Offloader) sentTokens(res host.Result) int {
	text := 0
	for _, c := range res.Content {
		text += o.EstimateTokens([]byte(c.Text))
	}
	structured := 0
	switch s := res.Structured.(type) {
	case nil:
	case json.RawMessage:
		structured = o.EstimateTokens(s)
	case []byte:
		structured = o.EstimateTokens(s)
	default:
		if b, err := json.Marshal(s); err == nil {
			structured = o.EstimateTokens(b)
		}
	}
	return max(text, structured)
}

// countDirect counts the savings of an offload outside a served call
// (Offloader.Offload): what is sent is the descriptor, as JSON.
func (o *Offloader) countDirect(ctx context.Context, out Outcome) {
	if toolOf(ctx) != "" || out.Action != Offloaded || out.Response == nil {
		return // a served call counts what it sent, see Offloader.serve
	}
	b, err := json.Marshal(out.Response)
	if err != nil {
		return
	}
	o.metrics.keptOut(ctx, out.Response.Summary.Operation, out.Tokens, o.EstimateTokens(b))
}
