package lro

import (
	"context"
	"log/slog"
)

// Sweep does at once what the janitor does in the background: it reads
// the directory again (counting the files of this Offloader's name that
// other processes wrote, forgetting those deleted behind its back) and
// deletes the files whose TTL has passed: published files named
// {prefix}-*-{ULID}.jsonl, and temporary files that no writer has touched
// for an hour (a crashed writer's), never one being written. It deletes
// only files of this Offloader's name (see [WithName]), each only once the
// expiry recorded in it has passed, and never anything else, a symbolic
// link or a directory. It returns how many files it deleted.
//
// The janitor calls Sweep's parts for you; call it yourself only when the
// Offloader was made [WithoutJanitor].
func (o *Offloader) Sweep(ctx context.Context) (int, error) {
	return o.store.Sweep(ctx)
}

func (o *Offloader) emitExpired(ctx context.Context, e FileExpiredEvent) {
	o.metrics.removed(ctx, "expired")
	if h := o.opts.hooks.OnFileExpired; h != nil {
		h(e)
	}
	if l := o.opts.logger; l != nil {
		l.LogAttrs(ctx, slog.LevelDebug, "lro: offloaded file expired",
			slog.String("path", e.Path), slog.Time("created", e.Created), slog.Time("expires", e.Expires))
	}
}
