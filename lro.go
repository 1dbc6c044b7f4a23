package lro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/recipes"
	"github.com/mcplro/lro/internal/records"
	"github.com/mcplro/lro/internal/store"
)

// Detail is the detail level records are serialized at: it decides which
// fields exist in the file, and so the line schema and recipes 9 and 10.
type Detail string

// The detail levels of the specification.
const (
	DetailLight  Detail = "light"
	DetailMedium Detail = "medium"
	DetailFull   Detail = "full"
)

// ParseDetail returns the detail level named s. The empty string is not a
// level: callers apply their tool's default first.
func ParseDetail(s string) (Detail, error) {
	switch d := Detail(s); d {
	case DetailLight, DetailMedium, DetailFull:
		return d, nil
	}
	return "", fmt.Errorf("lro: invalid detail %s: want light, medium or full", extract.EchoQuoted(s))
}

// A ResultSet is the complete result of one tool call, one record per line
// of the file it may become.
type ResultSet struct {
	// Operation names what produced the records ("recall", "search",
	// "inject", "list", or a tool's own name). It becomes part of the file
	// name, so it may hold only letters, digits and '_'.
	Operation string
	// Query is the query the records answer, or nil (null in the header).
	Query *string
	// Detail is the level the records were serialized at. Empty means
	// light.
	Detail Detail
	// Records are the records exactly as they will be written, each one
	// JSON value (Offload refuses anything else with a *RecordError, unless
	// Validated says the check was done). The engine never changes a
	// record; it only removes line breaks that are white space between
	// tokens, because a JSONL line cannot hold one. Records are not
	// retained after Offload returns.
	Records []json.RawMessage
	// Scores are the relevance scores of the records, when known. They go
	// into the summary's score_range and never into the file.
	Scores []float64
	// Tokens is the estimated cost of the result as it would be sent
	// inline. Zero means: estimate the records.
	Tokens int
	// Generic marks records that are not MIF memories. Their line schema
	// and recipes are inferred from the fields they really have.
	Generic bool
	// Extra holds the other top-level fields of the result (a query echo,
	// a total), kept in the summary so that offloading loses nothing.
	Extra map[string]json.RawMessage
	// SchemaVersion overrides the header's schema_version for this set.
	SchemaVersion string
	// Validated promises that every record is one valid JSON value, as
	// json.Marshal produces, so Offload skips checking them (about a third
	// of the cost of an offload). A broken promise makes a broken file.
	Validated bool

	src    records.Source  // the records, when they are not Records (a view of a tool result)
	checks recordChecks    // what estimating the records learned by checking them
	beside int             // tokens of the inline result besides its document
	doc    *records.Layout // the document the records came from, rebuilt around those a fallback keeps
	force  bool            // offload even under the threshold (the session budget)
	// preamble is the text the result had before its JSON, which the
	// file's header keeps whole.
	preamble string
}

// source returns the records of set.
func (set *ResultSet) source() records.Source {
	if set.src != nil {
		return set.src
	}
	return records.Slice{Lines: set.Records, Scores: set.Scores}
}

// count is the number of records in set.
func (set *ResultSet) count() int { return set.source().Count() }

// Action is what Offload did with a result set.
type Action int

const (
	// Inline: the set is at or under the threshold, or offloading is
	// disabled. Return the result as it is.
	Inline Action = iota
	// Offloaded: the set was written to a file; return Outcome.Response.
	Offloaded
	// Truncated: the set was over the threshold but the file could not be
	// written. Return Records[:Outcome.Kept] inline with Outcome.Warning.
	Truncated
)

func (a Action) String() string {
	switch a {
	case Inline:
		return "inline"
	case Offloaded:
		return "offloaded"
	case Truncated:
		return "truncated"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Outcome is the result of [Offloader.Offload].
type Outcome struct {
	Action Action
	// Tokens is the estimated size of the whole set.
	Tokens int
	// Response is the descriptor to return in place of the records, when
	// Action is Offloaded.
	Response *OffloadResponse
	// Kept is how many leading records fit the threshold, when Action is
	// Truncated.
	Kept int
	// Warning tells the model that offloading failed and the result is
	// truncated, when Action is Truncated.
	Warning string
	// Err is why the file could not be written, when Action is Truncated.
	Err error

	kept  []int           // Kept of each section of a result that had several
	files []offloadedFile // the files written, the descriptor's first
}

// offloadedFile is a file an Outcome points to, for its resource link.
type offloadedFile struct {
	path  string
	bytes int64
	lines bool // the lines of a text result
}

// OffloadResponse is the compact descriptor returned in place of an
// offloaded result set. Its JSON form is the specification's.
type OffloadResponse struct {
	Offloaded  bool            `json:"offloaded"`   // always true
	Summary    OffloadSummary  `json:"summary"`     // what the set holds
	FilePath   string          `json:"file_path"`   // absolute path of the JSONL file
	LineSchema json.RawMessage `json:"line_schema"` // JSON Schema of one record line
	JQRecipes  []JQRecipe      `json:"jq_recipes"`  // ten, run by lro_extract by number
	Guidance   string          `json:"guidance"`    // advisory text for the model
	// Section is the path of the field of the result whose records
	// FilePath holds ("edges", "data.items"), when the result was an
	// object; empty when it was the records themselves.
	Section string `json:"section,omitempty"`
	// Sections are the result's other large fields, each offloaded to a
	// file of its own, when it had several.
	Sections []SectionDescriptor `json:"sections,omitempty"`
}

// OffloadSummary describes the offloaded set so that a model without a
// shell can still answer questions about it.
type OffloadSummary struct {
	Count int `json:"count"` // records in the file
	// EstimatedTokens is the estimated size of the set, the tokens kept
	// out of the model's context.
	EstimatedTokens int         `json:"estimated_tokens"`
	Operation       string      `json:"operation"`      // e.g. "recall"
	TopNamespaces   []string    `json:"top_namespaces"` // up to 5, most frequent first
	ScoreRange      *[2]float64 `json:"score_range"`    // [min, max], or null without scores
	Detail          Detail      `json:"detail"`
	// Extra holds the result's other top-level fields (see ResultSet.Extra).
	Extra map[string]json.RawMessage `json:"extra,omitempty"`

	generic bool // records, not memories: no namespaces, no detail
}

// MarshalJSON writes the summary of memories with every field of the
// specification, and that of generic records without the memory-only
// ones (top_namespaces, detail, and score_range when there are no
// scores).
func (s OffloadSummary) MarshalJSON() ([]byte, error) {
	if !s.generic {
		type plain OffloadSummary // without this method
		return records.MarshalText(plain(s))
	}
	return records.MarshalText(struct {
		Count           int                        `json:"count"`
		EstimatedTokens int                        `json:"estimated_tokens"`
		Operation       string                     `json:"operation"`
		ScoreRange      *[2]float64                `json:"score_range,omitempty"`
		Extra           map[string]json.RawMessage `json:"extra,omitempty"`
	}{s.Count, s.EstimatedTokens, s.Operation, s.ScoreRange, s.Extra})
}

// JQRecipe is a ready-to-run shell command over the offloaded file.
type JQRecipe struct {
	Description string `json:"description"`
	Command     string `json:"command"`
}

// An Offloader decides whether result sets stay inline or go to a file, and
// deletes its files when their TTL has passed. It is safe for concurrent
// use. Close it to stop the janitor.
//
// It is the host-neutral engine alone: the adapters of the MCP SDKs are
// packages of their own (mcpgo for github.com/mark3labs/mcp-go, gosdk for
// the official SDK) that reach it through [Host], so that a program links
// the SDK it uses and no other.
type Offloader struct {
	cfg       Config
	opts      options
	templates *templates
	warned    sync.Map // tools whose large inline results were logged
	adapters  sync.Map // each host adapter's own state: Host.AdapterState
	sessions  sessionBudget
	metrics   *instruments
	store     *store.Store  // its files in the directory: names, quota, janitor
	extractor *extract.Tool // lro_extract and resources/read: lro_extract.go
	life      lifecycle     // the janitor's and Close's
}

// lifecycle is what starts and stops an Offloader: the janitor's
// goroutine, and Close, which closes the FS when New made it.
type lifecycle struct {
	ownFS     bool // the FS was made by New, and is closed by Close
	closed    atomic.Bool
	stop      chan struct{} // closed by Close: the janitor returns
	done      chan struct{} // closed when the janitor has returned
	closeOnce sync.Once
}

// New returns an Offloader for cfg. Unless [WithoutEnv] is given, the
// environment variables ATLATL_PROMPT__OFFLOAD__* that are set override
// cfg's fields (see [Config.ApplyEnv]): code first, then the environment.
// The result must be valid (see [Config.Validate]): a malformed variable
// or field is an error that names it. Unless [WithoutJanitor] is given,
// New starts the janitor goroutine; [Offloader.Close] stops it.
func New(cfg Config, opts ...Option) (*Offloader, error) {
	o := &Offloader{opts: defaultOptions()}
	for _, opt := range opts {
		opt(&o.opts)
	}
	o.opts.resolve()
	if !o.opts.envOff {
		if err := cfg.ApplyEnv(o.opts.envPrefix); err != nil {
			return nil, err
		}
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o.cfg = cfg
	if o.opts.fs == nil {
		o.opts.fs = store.ForDir(cfg.OutputDir)
		o.life.ownFS = true
	}
	o.cfg.OutputDir = dirInUse(o.opts.fs, cfg.OutputDir)
	if err := o.opts.checkPolicies(); err != nil {
		return nil, err
	}
	t, err := loadTemplates(o.opts.templates)
	if err != nil {
		return nil, err
	}
	o.templates = t
	if o.metrics, err = newInstruments(o.opts.meterProvider); err != nil {
		return nil, fmt.Errorf("lro: creating metric instruments: %w", err)
	}
	o.store = store.New(store.Config{
		FS:           o.opts.fs,
		Name:         o.opts.dir.name,
		Prefix:       cfg.FilePrefix,
		TTL:          cfg.TTL(),
		MaxDirBytes:  cfg.MaxDirBytes,
		MaxFileBytes: o.opts.dir.maxFile,
		MinFreeBytes: o.opts.dir.minFree,
		Observer: store.Observer{
			Logger:     o.opts.logger,
			Expired:    o.emitExpired,
			StoreError: o.metrics.storeError,
			StoreState: o.metrics.storeState,
		},
	})
	o.extractor = o.newExtractor()
	o.life.stop = make(chan struct{})
	o.life.done = make(chan struct{})
	if o.opts.janitor {
		go func() {
			defer close(o.life.done)
			o.store.RunJanitor(o.life.stop)
		}()
	} else {
		close(o.life.done)
	}
	return o, nil
}

// Config returns the configuration the Offloader was built with, after
// the environment and the defaults were applied. Its OutputDir is the
// directory in use, as the descriptors' paths begin: the absolute path of
// the directory given, [DefaultOutputDir] when none was, the directory of
// a [WithFS] file system; a store URL as given. It is a copy: changing it
// changes nothing.
func (o *Offloader) Config() Config {
	c := o.cfg
	c.Enabled = Bool(c.IsEnabled())
	return c
}

// FS returns the directory the Offloader writes to.
func (o *Offloader) FS() FS { return o.opts.fs }

// Name returns the name this Offloader goes by in its directory: the one
// given to [WithName], or the executable's base name.
func (o *Offloader) Name() string { return o.store.Name() }

// EstimateTokens estimates p with the Offloader's [Estimator].
func (o *Offloader) EstimateTokens(p []byte) int { return o.opts.estimator.EstimateTokens(p) }

// Close stops the janitor and waits for it to return. Files already
// written stay until a later janitor deletes them. Close is idempotent.
func (o *Offloader) Close() error {
	o.life.closeOnce.Do(func() {
		o.life.closed.Store(true)
		close(o.life.stop)
	})
	<-o.life.done
	o.extractor.Close()
	o.store.Close()
	if c, ok := o.opts.fs.(io.Closer); ok && o.life.ownFS {
		return c.Close()
	}
	return nil
}

// Offload judges set against the threshold. At or under it, or with
// offloading disabled, the Outcome is Inline. Over it, the records are
// written to a new file and the Outcome carries the descriptor; if the
// write fails, the Outcome is Truncated and no file is left behind.
//
// Offload returns an error only for a set it cannot accept (an invalid
// operation name or detail level, a record that is not JSON) or after
// Close; a failed write is never an error.
func (o *Offloader) Offload(ctx context.Context, set ResultSet) (Outcome, error) {
	return o.offload(ctx, []ResultSet{set}, nil, 0)
}

// offload is Offload of one set, or of the sections of one result: each
// set of l's sections in a file of its own, all or none, described in one
// descriptor, the first set's, which lists the others. beside is as for
// sectionSets. A single set is judged here against the threshold; the
// caller of several has judged the whole result, and set each one's
// Tokens.
func (o *Offloader) offload(ctx context.Context, sets []ResultSet, l *records.Layout, beside int) (Outcome, error) {
	for i := range sets {
		if err := o.accept(&sets[i]); err != nil {
			return Outcome{}, err
		}
	}
	if len(sets) == 1 {
		s := &sets[0]
		if s.Tokens <= 0 {
			s.Tokens, s.checks = o.estimateSet(s)
		}
		if !o.cfg.IsEnabled() || s.Tokens <= o.cfg.ThresholdTokens && !s.force {
			return Outcome{Action: Inline, Tokens: s.Tokens}, nil
		}
	}
	total := 0
	for _, s := range sets {
		total += s.Tokens
	}
	start := time.Now()
	files := make([]written, 0, len(sets))
	for _, s := range sets {
		w, err := o.writeFile(ctx, s, s.Tokens, start)
		if err != nil {
			// All or none: a descriptor never points at half a result.
			for _, f := range files {
				if rerr := o.store.RemoveWritten(f.name); rerr != nil {
					err = errors.Join(err, fmt.Errorf("removing %s: %w", f.name, rerr))
				}
			}
			var recErr *RecordError
			if errors.As(err, &recErr) {
				return Outcome{}, err
			}
			return o.truncated(ctx, sets, l, beside, w.path, err, time.Since(start)), nil
		}
		files = append(files, w)
	}
	resp := o.describe(ctx, sets[0], total, files[0])
	if l != nil {
		o.describeSections(ctx, resp, sets, l, total, files)
	}
	out := Outcome{Action: Offloaded, Tokens: total, Response: resp}
	var wrote int64
	for i, f := range files {
		wrote += f.bytes
		o.emitOffloaded(ctx, OffloadEvent{
			Operation: sets[i].Operation,
			Path:      f.path,
			Count:     sets[i].count(),
			Tokens:    sets[i].Tokens,
			Bytes:     f.bytes,
			Duration:  time.Since(start),
		})
		out.files = append(out.files, offloadedFile{f.path, f.bytes, isLines(sets[i])})
	}
	releaseAfter(wrote) // the result's memory, once dropped: release.go
	o.countDirect(ctx, out)
	return out, nil
}

// accept refuses a set that cannot be offloaded at all, and fills in its
// default detail level.
func (o *Offloader) accept(set *ResultSet) error {
	if o.life.closed.Load() {
		return ErrClosed
	}
	if err := store.CheckName(set.Operation); err != nil {
		return fmt.Errorf("lro: invalid operation %q: %v", set.Operation, err)
	}
	if set.Detail == "" {
		set.Detail = DetailLight
		return nil
	}
	_, err := ParseDetail(string(set.Detail))
	return err
}

// estimateRecords estimates the records as a JSON array would send them.
func (o *Offloader) estimateRecords(src records.Source) int {
	n := 0
	if o.heuristic() {
		_ = src.Each(func(_ int, r *records.Record) bool {
			n += quarterTokens(r.Line) + 1 // the separating comma
			return true
		})
		return (n + 3) / 4
	}
	_ = src.Each(func(_ int, r *records.Record) bool {
		n += o.opts.estimator.EstimateTokens(r.Line)
		return true
	})
	return n
}

// estimateSet is estimateRecords for the records of set, which, when
// they are to be checked and the estimator is the heuristic, it checks in
// the same pass (see checkRecords): their estimate then costs nothing
// more than checking them, and writing them needs no other pass to check
// them or to look for line breaks.
func (o *Offloader) estimateSet(set *ResultSet) (int, recordChecks) {
	if o.heuristic() && !set.Validated && o.cfg.IsEnabled() {
		return checkRecords(set.source(), !set.Generic)
	}
	return o.estimateRecords(set.source()), recordChecks{}
}

// truncated is the fallback of sets whose files could not be written, or
// were not to be (path is then empty), for the reason err: as many leading
// records of each as fit the threshold together, sent inline, and a
// warning. l and beside are as for offload; took is the time the failed
// write took, zero when none was tried.
func (o *Offloader) truncated(ctx context.Context, sets []ResultSet, l *records.Layout, beside int, path string, err error, took time.Duration) Outcome {
	tokens, count := 0, 0
	for _, s := range sets {
		tokens += s.Tokens
		count += s.count()
	}
	// What is sent inline may wrap each record (a search hit adds its
	// score) and carry other fields, and the warning goes with it; the
	// budget covers all of it (the warning sized with count in place of
	// the number kept, which has no more digits).
	warn := o.EstimateTokens([]byte(store.FallbackWarning(o.opts.fs, err, count, count)))
	var kept []int
	if l != nil {
		kept = o.fit(l, beside+warn)
	} else {
		kept = []int{o.leading(sets[0].source(), o.cfg.ThresholdTokens-o.overhead(sets[0])-warn)}
	}
	n := 0
	for _, k := range kept {
		n += k
	}
	o.emitWriteFailed(ctx, WriteFailedEvent{
		Operation: sets[0].Operation,
		Path:      path,
		Count:     count,
		Kept:      n,
		Tokens:    tokens,
		Err:       err,
		Duration:  took,
	})
	return Outcome{Action: Truncated, Tokens: tokens, Kept: n, Warning: store.FallbackWarning(o.opts.fs, err, n, count), Err: err, kept: kept}
}

// overhead returns the tokens of the inline result of set besides its
// records: what the result sends beside the document, and the document
// without its records. Only a fallback needs it, so it is found only then.
func (o *Offloader) overhead(set ResultSet) int {
	t := set.beside
	if set.doc != nil && !set.doc.Items {
		t += o.EstimateTokens(set.doc.Truncated([]int{0}))
	}
	return t
}

// leading returns how many of the first records, each as the result
// sends it and with a separator, fit budget tokens.
func (o *Offloader) leading(src records.Source, budget int) int {
	used, kept := 0, 0
	_ = src.Each(func(i int, r *records.Record) bool {
		t := o.opts.estimator.EstimateTokens(r.Sent) + 1 // and its separator
		if used+t > budget {
			return false
		}
		used += t
		kept = i + 1
		return true
	})
	return kept
}

// describe builds the descriptor of a published file.
// w.stats is what writing it learned of its records.
func (o *Offloader) describe(ctx context.Context, set ResultSet, tokens int, w written) *OffloadResponse {
	path := w.path
	sum := OffloadSummary{
		Count:           set.count(),
		EstimatedTokens: tokens,
		Operation:       set.Operation,
		TopNamespaces:   []string{},
		ScoreRange:      w.stats.ScoreRange(),
		Detail:          set.Detail,
	}
	schema, recipes := o.schemaAndRecipes(set, w.stats)
	if set.Generic {
		sum.generic = true
	} else {
		sum.TopNamespaces = w.stats.Namespaces.Top(5)
	}
	stated := sum.stated()
	if set.Query != nil {
		stated["query"] = *set.Query // the header keeps it
	}
	sum.Extra = records.BoundExtra(records.WithoutStated(set.Extra, stated))
	return &OffloadResponse{
		Offloaded:  true,
		Summary:    sum,
		FilePath:   path,
		LineSchema: schema,
		JQRecipes:  shellRecipes(recipes, path),
		Guidance:   o.guidanceFor(ctx, set, tokens, w, "", 0),
	}
}

// guidanceFor renders the guidance of a descriptor of set, written as w;
// section and sections name the field the file holds and how many others
// there are, for a result that had several.
func (o *Offloader) guidanceFor(ctx context.Context, set ResultSet, tokens int, w written, section string, sections int) string {
	var largest int
	if w.stats != nil && w.stats.Largest > 4*o.cfg.ThresholdTokens {
		largest = w.stats.Largest // a record larger than the threshold: say so
	}
	return o.templates.guidance(o.nativeGuidance(ctx), guidanceData{
		Count:    set.count(),
		Tokens:   tokens,
		Path:     w.path,
		Largest:  largest,
		Detail:   set.Detail,
		Memories: !set.Generic,
		Lines:    isLines(set),
		Section:  section,
		Sections: sections,
		TTL:      o.cfg.TTL(),
	})
}

// schemaAndRecipes returns the line schema and recipes of set: the
// templates' for memories, inferred from the records otherwise (st
// holds their shape).
func (o *Offloader) schemaAndRecipes(set ResultSet, st *recipes.Stats) (json.RawMessage, []Recipe) {
	if set.Generic {
		return st.Shape.Schema(), inferredRecipes(st.Shape.Recipes())
	}
	return slices.Clone(o.templates.schemas[set.Detail]), o.templates.recipes[set.Detail]
}

// nativeGuidance reports whether the guidance should point to lro_extract:
// always for files in an object store, which no shell recipe can reach;
// otherwise when the server handling the call has it (as its adapter told
// Serve), or, outside a server, when AddExtractTool was called.
func (o *Offloader) nativeGuidance(ctx context.Context) bool {
	if store.IsRemote(o.opts.fs) {
		return true
	}
	if native, ok := extract.Native(ctx); ok {
		return native
	}
	return o.extractor.Served()
}

func (o *Offloader) emitOffloaded(ctx context.Context, e OffloadEvent) {
	o.metrics.offloaded(ctx, e)
	if h := o.opts.hooks.OnOffload; h != nil {
		h(e)
	}
	if l := o.opts.logger; l != nil {
		l.LogAttrs(ctx, slog.LevelInfo, "lro: result offloaded",
			slog.String("operation", e.Operation), slog.String("path", e.Path),
			slog.Int("count", e.Count), slog.Int("tokens", e.Tokens),
			slog.Int64("bytes", e.Bytes), slog.Duration("duration", e.Duration))
	}
}

func (o *Offloader) emitWriteFailed(ctx context.Context, e WriteFailedEvent) {
	o.metrics.writeFailed(ctx, e)
	o.store.CountError(ctx, "offload", e.Err)
	if h := o.opts.hooks.OnWriteFailed; h != nil {
		h(e)
	}
	if l := o.opts.logger; l != nil {
		level := slog.LevelWarn
		if errors.Is(e.Err, ErrStoreDown) {
			level = slog.LevelDebug // the outage is logged once, not each fallback
		}
		l.LogAttrs(ctx, level, "lro: offload write failed",
			slog.String("operation", e.Operation), slog.String("path", e.Path),
			slog.Int("count", e.Count), slog.Int("kept", e.Kept), slog.Any("error", e.Err))
	}
}

// stated returns the summary's fields by their JSON names, as
// records.WithoutStated takes them.
func (s OffloadSummary) stated() map[string]any {
	return map[string]any{
		"count":            s.Count,
		"estimated_tokens": s.EstimatedTokens,
		"operation":        s.Operation,
		"top_namespaces":   s.TopNamespaces,
		"score_range":      s.ScoreRange,
		"detail":           s.Detail,
	}
}
