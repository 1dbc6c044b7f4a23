package extract

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/recipes"
	"github.com/mcplro/lro/internal/store"
)

// The format's names that lro_extract reads; the root package exports
// them as lro.ExtractToolName, lro.HeaderType and
// lro.GenericSchemaVersion.
const (
	// ToolName is the name of the native extraction tool.
	ToolName = "lro_extract"
	// HeaderType is the value of the type field of every header line.
	HeaderType = "lro_header"
	// GenericSchemaVersion is the schema_version of the header of a file
	// whose records are not MIF memories.
	GenericSchemaVersion = "generic"
)

// Env is what the tool asks of the engine that serves it: its
// configuration, its file store, and the engine's functions it calls.
type Env struct {
	ThresholdTokens  int
	TTL              time.Duration
	FilePrefix       string
	FS               store.FS
	Store            *store.Store
	Limits           Limits // as configured: defaults are applied per call
	ResourceMaxBytes int64  // resolved
	ResourcesOff     bool   // lro.WithoutResourceLinks
	// EstimateTokens is the engine's estimator.
	EstimateTokens func([]byte) int
	// Logger returns the configured logger, or slog's default one.
	Logger func() *slog.Logger
	// Extracted and Unisolated count a call by outcome, and a query run
	// without a worker by reason.
	Extracted  func(ctx context.Context, outcome string, took time.Duration)
	Unisolated func(ctx context.Context, reason string)
	// OutcomeStoreError is the outcome of a call a store's failure ended.
	OutcomeStoreError string
	// Recipes returns the memory recipes of a detail level.
	Recipes func(detail string) ([]recipes.Recipe, bool)
}

// Tool is lro_extract's part of an engine: what it keeps between calls,
// and the warmings Close waits for.
type Tool struct {
	env       Env
	native    atomic.Bool // the tool was defined (see ExtractToolDefinition)
	resources atomic.Bool // ServeResources was called (see ServesResources)
	closed    atomic.Bool
	records   *recordCache               // decoded files
	answers   *extractworker.AnswerCache // answers of recipes and questions
	copies    localCopies                // local copies of a store's files: copy.go
	queries   queryCache                 // compiled recipes
	warmMu    sync.Mutex                 // orders warmExtract's Add before Close's Wait
	warming   sync.WaitGroup             // warmExtract's goroutines, which Close waits for
}

// New returns the tool of an engine.
func New(env Env) *Tool {
	cache := env.Limits.CacheBytes
	if cache == 0 {
		cache = DefaultCacheBytes
	}
	o := &Tool{env: env, records: newRecordCache(cache)}
	if cache > 0 { // a cache turned off keeps no answers either
		o.answers = extractworker.NewAnswerCache(extractworker.DefaultAnswerBytes)
	}
	return o
}

// Close waits for the warmings and removes the local copies. A warming
// still reading a file would open the directory again after the caller
// has removed it.
func (o *Tool) Close() {
	o.warmMu.Lock()
	o.closed.Store(true)
	o.warmMu.Unlock()
	o.warming.Wait()
	o.copies.close()
}

// Served reports whether the tool was defined for a host, so that
// descriptors' guidance points to it.
func (o *Tool) Served() bool { return o.native.Load() }

// Name returns the name the engine goes by in its directory.
func (o *Tool) Name() string { return o.env.Store.Name() }

// EstimateTokens estimates p with the engine's estimator.
func (o *Tool) EstimateTokens(p []byte) int { return o.env.EstimateTokens(p) }

func (o *Tool) logger() *slog.Logger { return o.env.Logger() }

// nativeKey is the context key under which a host adapter says whether
// the server handling a call serves lro_extract.
type nativeKey struct{}

// WithNative returns ctx saying whether the server handling the call
// serves lro_extract.
func WithNative(ctx context.Context, native bool) context.Context {
	return context.WithValue(ctx, nativeKey{}, native)
}

// Native returns what ctx says of whether the server serves lro_extract,
// and whether it says.
func Native(ctx context.Context) (native, known bool) {
	native, known = ctx.Value(nativeKey{}).(bool)
	return native, known
}

// The errors of ReadResource, exported by the root package as
// lro.ErrResourceNotFound, lro.ErrResourceTooLarge and lro.ErrResourceBusy.
var (
	ErrResourceNotFound = errors.New("lro: resource not found")
	ErrResourceTooLarge = errors.New("lro: resource too large")
	ErrResourceBusy     = errors.New("lro: resource read refused")
)
