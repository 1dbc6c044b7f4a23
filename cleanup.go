package lro

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"time"

	"github.com/oklog/ulid/v2"
)

// maxRescan bounds how long the janitor sleeps when it knows of no file to
// expire: files written by other processes into the same directory are
// found within this time (the specification's hourly custodial task).
const maxRescan = time.Hour

// Sweep deletes the files whose TTL has passed: published files named
// {prefix}-*-{ULID}.jsonl and temporary files a crashed writer left behind,
// whatever process wrote them, judged by the creation time in the ULID. It
// never deletes anything else, nor a symbolic link or a directory of a
// matching name. It returns how many files it deleted.
//
// The janitor calls Sweep for you; call it yourself only when the
// Offloader was made [WithoutJanitor].
func (o *Offloader) Sweep(ctx context.Context) (int, error) {
	n, _, err := o.sweep(ctx, time.Now())
	return n, err
}

// sweep deletes expired files and returns when the next known file expires
// (zero if none).
func (o *Offloader) sweep(ctx context.Context, now time.Time) (deleted int, next time.Time, err error) {
	entries, err := o.opts.fs.ReadDir()
	if err != nil {
		return 0, time.Time{}, err
	}
	ttl := o.cfg.TTL()
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		_, id, _, ok := parseFileName(o.cfg.FilePrefix, e.Name())
		if !ok {
			continue
		}
		created := ulid.Time(id.Time())
		expires := created.Add(ttl)
		if now.Before(expires) {
			if next.IsZero() || expires.Before(next) {
				next = expires
			}
			continue
		}
		if rerr := o.opts.fs.Remove(e.Name()); rerr != nil {
			if !errors.Is(rerr, fs.ErrNotExist) { // another sweep was first
				err = rerr // keep going: one stuck file must not keep the rest
			}
			continue
		}
		deleted++
		o.emitExpired(ctx, FileExpiredEvent{Path: o.opts.fs.Path(e.Name()), Created: created, TTL: ttl})
	}
	return deleted, next, err
}

// runJanitor sweeps, then sleeps until the next known expiry or maxRescan,
// whichever comes first, until Close.
func (o *Offloader) runJanitor() {
	defer close(o.done)
	ctx := context.Background()
	rescan := min(o.cfg.TTL(), maxRescan)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-timer.C:
		}
		now := time.Now()
		_, next, err := o.sweep(ctx, now)
		if err != nil && o.opts.logger != nil {
			o.opts.logger.LogAttrs(ctx, slog.LevelWarn, "lro: janitor", slog.Any("error", err))
		}
		wait := rescan
		if !next.IsZero() {
			wait = min(next.Sub(now), rescan)
		}
		timer.Reset(wait)
	}
}

func (o *Offloader) emitExpired(ctx context.Context, e FileExpiredEvent) {
	if h := o.opts.hooks.OnFileExpired; h != nil {
		h(e)
	}
	if l := o.opts.logger; l != nil {
		l.LogAttrs(ctx, slog.LevelDebug, "lro: offloaded file expired",
			slog.String("path", e.Path), slog.Time("created", e.Created))
	}
}
