package lro

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcplro/lro/internal/store"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Hooks are called when something worth observing happens. Each is
// optional (nil means not called), is called synchronously on the goroutine
// that caused the event, and must be quick and safe for concurrent use.
// Events are also logged when a logger is set with [WithLogger].
type Hooks struct {
	// OnOffload is called after a file has been published.
	OnOffload func(OffloadEvent)
	// OnWriteFailed is called when a file could not be written and the
	// result falls back to an inline, truncated one (the specification's
	// OffloadWriteFailed event). Err says why: a write error, or
	// [ErrOverQuota], [ErrFileTooLarge] or [ErrLowDiskSpace].
	OnWriteFailed func(WriteFailedEvent)
	// OnFileExpired is called after the janitor has deleted a file whose
	// TTL passed (the specification's OffloadFileExpired event), or a
	// temporary file that a crashed writer left behind.
	OnFileExpired func(FileExpiredEvent)
	// OnFileEvicted is called after a file was deleted before its TTL
	// passed, to keep the files of this Offloader's name under
	// Config.MaxDirBytes. It is called on the goroutine of the offload
	// that needed the room, before that offload returns.
	OnFileEvicted func(FileEvictedEvent)
}

// OffloadEvent describes a file that has just been published.
type OffloadEvent struct {
	Operation string
	Path      string        // absolute path of the file
	Count     int           // records in the file
	Tokens    int           // estimated tokens of the records inline (lro.offload.tokens counts these less what was sent)
	Bytes     int64         // size of the file
	Duration  time.Duration // time taken to write and publish it
}

// WriteFailedEvent describes a write that failed.
type WriteFailedEvent struct {
	Operation string
	Path      string // the path the file would have had
	Count     int    // records in the set
	Kept      int    // records returned inline
	Tokens    int    // estimated tokens of the whole set
	Err       error  // what went wrong
	// Duration is the time spent writing before the write failed; zero
	// when no write was tried (a result over the cap on its size).
	Duration time.Duration
}

func (o *Offloader) emitEvicted(ctx context.Context, e FileEvictedEvent) {
	o.metrics.removed(ctx, "evicted")
	if h := o.opts.hooks.OnFileEvicted; h != nil {
		h(e)
	}
	if l := o.opts.logger; l != nil {
		l.LogAttrs(ctx, slog.LevelInfo, "lro: offloaded file evicted to stay under max_dir_bytes",
			slog.String("path", e.Path), slog.Int64("bytes", e.Bytes), slog.Time("expires", e.Expires),
			slog.String("for", e.For), slog.Int64("used", e.Used), slog.Int64("need", e.Need), slog.Int64("quota", e.Quota))
	}
}

// FileExpiredEvent describes a file the janitor deleted: its Path, when
// it was Created (from the ULID in its name), its TTL (Expires - Created,
// which for a file of another process of the same name may differ from
// this Offloader's) and when it Expires (the expiry recorded in the file,
// see [WithName], never before Created + TTL).
type FileExpiredEvent = store.FileExpiredEvent

// FileEvictedEvent describes a file deleted before its TTL passed, and
// why: its Path, Bytes, Created and Expires; For, the path of the file
// that needed the room; Reason, a sentence for a log line; and Used (the
// bytes of this Offloader's files and of files being written before the
// eviction), Need (the size of the new file) and Quota
// (Config.MaxDirBytes), Used + Need having been over Quota.
type FileEvictedEvent = store.FileEvictedEvent

// MeterName is the instrumentation scope of the Offloader's metrics.
const MeterName = "github.com/mcplro/lro"

// instruments are the Offloader's metric instruments; with no provider
// they are the API's no-op ones.
type instruments struct {
	offloads        metric.Int64Counter
	offloadBytes    metric.Int64Counter
	offloadTokens   metric.Int64Counter
	offloadDuration metric.Float64Histogram
	fallbacks       metric.Int64Counter
	filesRemoved    metric.Int64Counter
	extractCalls    metric.Int64Counter
	extractDuration metric.Float64Histogram
	unisolatedCalls metric.Int64Counter
	storeErrors     metric.Int64Counter
	storeStates     metric.Int64Counter
}

// DurationBuckets are the explicit bucket bounds, in seconds, of the
// duration histograms: from half a millisecond (a small file on a local
// disk) to a minute (a large upload to a slow store), about two buckets
// an octave where latencies usually lie.
var DurationBuckets = []float64{
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10, 20, 30, 60,
}

// outcomeStoreError is the lro.extract.calls outcome of a call an object
// store failed (see storeFailed).
const outcomeStoreError = "store_error"

func newInstruments(mp metric.MeterProvider) (*instruments, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter(MeterName)
	var in instruments
	var err error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, e := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err == nil {
			err = e
		}
		return c
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		h, e := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(DurationBuckets...))
		if err == nil {
			err = e
		}
		return h
	}
	in.offloads = counter("lro.offloads", "{result}", "Results offloaded to a file.")
	in.offloadBytes = counter("lro.offload.bytes", "By", "Bytes written to offloaded files.")
	in.offloadTokens = counter("lro.offload.tokens", "{token}", "Estimated tokens kept out of the model's context: a result's inline estimate less that of the answer sent in its place, by operation and tool.")
	in.offloadDuration = histogram("lro.offload.duration", "Time to write and publish an offloaded file, by outcome: ok, or fallback when the write failed.")
	in.fallbacks = counter("lro.fallbacks", "{result}", "Offloads whose write failed, sent truncated inline instead.")
	in.filesRemoved = counter("lro.files.removed", "{file}", "Offloaded files deleted, by reason.")
	in.extractCalls = counter("lro.extract.calls", "{call}", "lro_extract calls, by outcome.")
	in.extractDuration = histogram("lro.extract.duration", "Time to answer an lro_extract call.")
	in.storeErrors = counter("lro.store.errors", "{error}", "Failures of an object store, by what met them and their kind.")
	in.storeStates = counter("lro.store.state_changes", "{change}", "Changes of an object store's state: down when a request found it down (calls then fall back at once), up when a probe found it answering.")
	in.unisolatedCalls = counter("lro.extract.unisolated", "{query}", "lro_extract queries run without a worker process, or refused for want of one, by reason.")
	return &in, err
}

func (in *instruments) offloaded(ctx context.Context, e OffloadEvent) {
	a := offloadAttrs(ctx, e.Operation)
	op := metric.WithAttributes(a...)
	in.offloads.Add(ctx, 1, op)
	in.offloadBytes.Add(ctx, e.Bytes, op)
	// lro.offload.tokens is counted once the answer sent in the result's
	// place is known (keptOut), not here.
	in.offloadDuration.Record(ctx, e.Duration.Seconds(), metric.WithAttributes(append(a, attrOutcome("ok"))...))
}

// writeFailed counts a fallback and, when a write was tried, records its
// time with the outcome "fallback": a store that hangs shows in the
// histogram, not only in the counters.
func (in *instruments) writeFailed(ctx context.Context, e WriteFailedEvent) {
	a := offloadAttrs(ctx, e.Operation)
	in.fallbacks.Add(ctx, 1, metric.WithAttributes(a...))
	if e.Duration > 0 {
		in.offloadDuration.Record(ctx, e.Duration.Seconds(), metric.WithAttributes(append(a, attrOutcome("fallback"))...))
	}
}

// removed counts a file deleted for reason: "expired" or "evicted".
func (in *instruments) removed(ctx context.Context, reason string) {
	in.filesRemoved.Add(ctx, 1, metric.WithAttributes(attrReason(reason)))
}

// storeError counts a failure of the store met during what, of kind (see
// storeErrorKind).
func (in *instruments) storeError(ctx context.Context, what, kind string) {
	in.storeErrors.Add(ctx, 1, metric.WithAttributes(attribute.String("during", what), attribute.String("kind", kind)))
}

// storeState counts a change of the store's state, "down" or "up".
func (in *instruments) storeState(ctx context.Context, state string) {
	in.storeStates.Add(ctx, 1, metric.WithAttributes(attribute.String("state", state)))
}

// extracted counts an lro_extract call: "ok", "refused" when it was
// answered with an error, "deadline" when its query was stopped at its
// deadline, or "store_error" when the store failed it.
func (in *instruments) extracted(ctx context.Context, outcome string, took time.Duration) {
	o := metric.WithAttributes(attrOutcome(outcome))
	in.extractCalls.Add(ctx, 1, o)
	in.extractDuration.Record(ctx, took.Seconds(), o)
}

// unisolated counts a query run without a worker process, or refused for
// want of one; see Offloader.unisolated.
func (in *instruments) unisolated(ctx context.Context, reason string) {
	in.unisolatedCalls.Add(ctx, 1, metric.WithAttributes(attrReason(reason)))
}

func attrOperation(op string) attribute.KeyValue { return attribute.String("operation", op) }
func attrReason(r string) attribute.KeyValue     { return attribute.String("reason", r) }
func attrOutcome(o string) attribute.KeyValue    { return attribute.String("outcome", o) }
