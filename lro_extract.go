package lro

import (
	"context"
	"time"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/recipes"
)

// The lro_extract tool and resources/read of offloaded files: the face of
// internal/extract, which does the work.

// ExtractLimits bounds lro_extract's queries and says where they run.
// Zero fields take their defaults.
//
// # Where queries run
//
// By default, on Unix, each query (a recipe, a jq filter, a grep or a
// range of lines) runs in a worker process: the program
// lro-worker (cmd/lro-worker: go install
// github.com/mcplro/lro/cmd/lro-worker@VERSION, the version of lro your
// program links), found through WorkerPath, the LRO_WORKER_PATH
// environment variable, beside this executable, or on PATH; else this
// very executable, started again with an environment variable that makes
// an init function of this module serve queries before the program's
// main runs. Your main needs no change either way, but this executable
// run again runs every init function of its packages (Go runs those of
// packages whose import paths sort first before lro's) in each worker, at
// every start: a package that writes a PID file or truncates a log in its
// init does so again. lro-worker runs no code of yours; without it, the
// first use of lro_extract logs this at Info. Files of an FS that is not a
// directory of this system (an object store, an lrotest.MemFS) are copied first
// to a private local file, once, which the workers read. A small pool of
// workers is kept warm; a file's decoded records live in the worker that
// read it, and later queries of the file go there. This guarantees, whatever the query:
//   - the server's memory is not touched by it: the server holds the
//     call's arguments, the file's header and the query's results, all
//     bounded;
//   - it ends by Timeout of its worker's CPU time, so that a loaded
//     machine does not stop a query that costs little: the worker's own
//     watch stops what gojq can interrupt, and a worker still busy half a
//     second of CPU later (in a builtin, a regular expression over a huge
//     string) is killed and replaced; a worker that gets too little CPU
//     to use it is stopped at four times Timeout plus 2 s of wall-clock time; the
//     call says which bound stopped the query;
//   - it uses at most WorkerMemoryBytes: on Linux a hard limit on the
//     memory the worker maps for data (RLIMIT_DATA: heap and stacks,
//     touched or not), past which the worker dies and is replaced and the
//     call says the query needed too much memory; elsewhere (and in
//     builds with the race detector) the limit steers Go's collector, and
//     the heap watchdog below stops the query;
//   - all queries together use at most MemoryBudget (1 GiB by default):
//     no more than MaxWorkers workers run, and each may use only its
//     share of the budget;
//   - it holds one worker: other calls run on the others, and when every
//     worker is held by a query running for a quarter of a second already,
//     the pool grows, up to MaxWorkers. Calls that find no worker free
//     queue: each session's in a line of its own, served in order, the
//     sessions taking turns (round robin), so that callers looping on
//     queries that run to their deadline cannot keep the workers from a
//     caller that asks now and then. A call is refused ("busy, retry in N
//     s", with the counts of the calls running and waiting) only past 16
//     calls of its session waiting or 30 s in line, which an agent's
//     parallel calls do not reach;
//   - it does not slow the server's other tools: workers run at a lower
//     CPU priority (nice 5) than the server.
//
// What it costs: a worker's start (tens of milliseconds, once), a copy of
// the results through a pipe (tens of microseconds for a screenful), the
// workers' memory (each keeps up to CacheBytes of decoded records), and a
// file decoded once per worker that queries it rather than once per
// process.
//
// Queries run in this process only when InProcess is set. Where workers
// cannot run (other systems; no worker starts, twice in a row) a query
// fails with an error that says why, is counted
// (lro.extract.unisolated), and logged at Warn, through slog.Default when
// no logger is set. In process, queries are bounded by
// jqsandbox's guards and watchdog: runs are serialized; the heap growth is
// measured and a query is stopped past MaxHeapBytes; each builtin that
// could allocate or recurse without bound in a single call is checked
// before it runs; the deadline cancels the rest. That holds for the
// queries the guards know. A builtin that runs long without allocating
// (a regular expression over a long string) cannot be interrupted: it
// keeps the single run slot past its deadline, and other calls fail as
// busy meanwhile; and Go's out-of-memory is fatal to the whole server.
type ExtractLimits struct {
	// Timeout bounds a query's CPU time in its worker, compiling and
	// decoding included (and four times Timeout plus 2 s its wall-clock
	// time, for a worker given no CPU), and a resource read's wall-clock time;
	// default 10s. Queries run in this process (InProcess) are bounded by
	// Timeout of wall-clock time: one query's CPU time cannot be told
	// from the others' there.
	Timeout time.Duration
	// MaxQueryBytes bounds the length of the query text; default 4096.
	MaxQueryBytes int
	// MaxFileBytes bounds the size of the file read, by a query or a
	// resource read (larger files are refused before anything is read);
	// default 256 MiB.
	MaxFileBytes int64
	// MaxHeapBytes bounds the heap growth while a query runs, the decoded
	// records included when they are not cached; default 512 MiB.
	MaxHeapBytes uint64
	// CacheBytes bounds the decoded records kept between queries (an
	// estimate of their size in memory, not of the files'), in each
	// worker (or in this process). Default: in each worker, a sixth of
	// WorkerMemoryBytes ([DefaultExtractCacheBytes] at least: 64 MiB with
	// the other defaults), part of the memory the worker is held to; in
	// this process, [DefaultExtractCacheBytes]. Negative disables. A
	// query that slurps whole records of a file too large to keep first
	// empties its worker's cache. One file takes at most half of it. What is kept
	// of a file is what its queries read: the fields they name, and, for
	// a select, each record's line (or, in a worker, where the line is in
	// the file), from which the records it outputs are decoded. A file
	// smaller than a quarter of CacheBytes in a worker (half in this
	// process) is decoded so before its first query runs; a larger one as its query runs, which keeps what it
	// decoded when it read every record (not when it stopped at a full
	// output) and that fits.
	CacheBytes int64

	// InProcess runs queries in this process rather than in worker
	// processes: it gives up their isolation (see above for what that
	// guarantees less). Default false: queries run only in workers, and a
	// call fails with a clear error where none can run.
	InProcess bool
	// WorkerPath is the program the workers run: a build of
	// cmd/lro-worker, which runs no code of yours. Default: the
	// LRO_WORKER_PATH environment variable, else lro-worker beside this
	// executable, else lro-worker on PATH, else this executable run again
	// (see "Where queries run" above); a program found that answers with
	// another protocol (an older build) is passed over for the next.
	WorkerPath string
	// Workers is how many worker processes are kept warm; under load the
	// pool grows to MaxWorkers. Default 2.
	Workers int
	// MaxWorkers bounds the worker processes that run at once. Default
	// twice Workers, fewer if MemoryBudget cannot give each 384 MiB (two
	// with the default budget).
	MaxWorkers int
	// WorkerMemoryBytes is what a worker may use beyond its footprint at
	// start. Default: its share of MemoryBudget, (MemoryBudget -
	// MaxCallBytes) / MaxWorkers - 32 MiB (384 MiB with the other
	// defaults).
	WorkerMemoryBytes uint64
	// MemoryBudget bounds the memory lro_extract takes in all, in this
	// process and its workers together: the bytes admitted calls hold
	// here (MaxCallBytes) plus, for each of the MaxWorkers workers, its
	// footprint at start (32 MiB) and WorkerMemoryBytes. Default 1 GiB
	// ([DefaultExtractMemoryBudget]). Fields set beyond it are brought
	// within it: MaxCallBytes to half of it at most, then MaxWorkers
	// lowered (to one at least), then WorkerMemoryBytes, never below 64
	// MiB; a budget under 192 MiB (two such workers) counts as 192 MiB.
	// Queries run in this process take MaxCallBytes and MaxHeapBytes of it
	// (MaxHeapBytes is lowered to fit).
	MemoryBudget uint64
	// MaxCalls bounds the lro_extract calls and resources/read of
	// offloaded files (see [Host.ReadResource]) the process runs at
	// once; default 16. More calls wait, each session's in its own line
	// (16 deep), taking turns, 30 s at most. The process's Offloaders
	// share the count, each checking its own bound.
	MaxCalls int
	// MaxCallBytes bounds the memory the admitted calls may hold in this
	// process: headers and results (a resource read's text), and, for
	// queries run in this process, the records of the files they decode;
	// default 3/16 of MemoryBudget (192 MiB), 256 MiB at most.
	MaxCallBytes int64
}

// ExtractToolDefinition returns the definition of lro_extract, whose calls
// [Offloader.Extract] answers, for a host adapter that registers the tool.
// The tool only reads: hosts should annotate it read-only,
// non-destructive, idempotent and closed-world. From this call on, the
// Offloader takes the tool as served (descriptors' guidance points to it)
// and starts its worker processes, so that a first query does not wait
// for one; every host gets both by registering the tool with it.
//
// Its Meta carries [MaxResultSizeCharsKey]: the tool's answers are bounded,
// so a client that saves large answers to a file keeps them inline.
func (h Host) ExtractToolDefinition() host.ToolDefinition {
	def := h.o.extractor.ExtractToolDefinition()
	def.Meta = map[string]any{MaxResultSizeCharsKey: h.o.MaxExtractChars()}
	return def
}

// MaxResultSizeCharsKey is the _meta key of a tool definition by which a
// client learns the largest answer, in characters, the tool returns
// (Claude Code documents it: an answer under it is not moved to a file).
// lro_extract's definition carries it, so that a client never stores
// lro's own answer in a file, which the model would then have to read
// with a shell.
const MaxResultSizeCharsKey = "anthropic/maxResultSizeChars"

// MaxExtractChars is the most characters an lro_extract answer holds:
// Config.ThresholdTokens and [NoticeTokens], at the four characters a
// token that the default estimator never exceeds (it counts at least a
// token for four characters of Latin script, more for others).
func (o *Offloader) MaxExtractChars() int {
	return 4 * (o.cfg.ThresholdTokens + NoticeTokens)
}

// Extract answers one lro_extract call, given its arguments decoded from
// JSON: file_path, and recipe (with params), query (with params and
// slurp), grep (with context and ignore_case) or lines. It returns the results as text, at most the threshold's worth,
// or an error whose message is for the model: what was wrong with the
// call, or why the file or the query was refused or stopped. Messages are
// capped, and repeat at most a few hundred bytes of an argument.
//
// Where the query runs, and what that guarantees, is told at
// [ExtractLimits]. Whatever the query, the call is admitted first, fairly
// between MCP sessions (one call a session waits, a second at most): when
// the process already runs ExtractLimits.MaxCalls of them, or they hold
// ExtractLimits.MaxCallBytes, it fails with "busy, retry in N s", and the
// place that comes free meanwhile is kept a while for its session.
func (o *Offloader) Extract(ctx context.Context, args map[string]any) (string, error) {
	return o.extractor.Extract(ctx, args)
}

// Offloaded files as MCP resources. A file is named by a URI that does not
// assume the client shares the server's disk:
//
//	lro://files/{name}              the whole file, up to the read limit
//	lro://files/{name}/lines/{range} lines of it, as sed -n prints them
//
// where {name} is the file's name ({prefix}-{operation}-{ULID}.jsonl) and
// {range} is 100-200, 5 or 100-. The server answers resources/read for
// these URIs with [Host.ReadResource], through the resource
// templates of [Host.ServeResources], and offloaded results carry a
// resource_link to their file.

// ServeResources is for host adapters: it returns the resource templates
// to register, whose reads [Host.ReadResource] answers, and marks the
// Offloader as serving them, so that offloaded results carry a resource
// link to their file from then on. It returns nil, and links stay off,
// when [WithoutResourceLinks] was given.
//
// The templates' URIs hold the file prefix: Offloaders with different
// prefixes can serve resources on one server without their templates
// overlapping.
func (h Host) ServeResources() []host.ResourceTemplate {
	return h.o.extractor.ServeResources()
}

// ReadResource answers resources/read for uri, a URI of
// lro://files/{name} or lro://files/{name}/lines/{range}: the whole file
// when it is at most the read limit (see [WithResourceMaxBytes]), or the
// lines in the range, as sed -n prints them, up to the limit (a longer
// line is cut, with a note).
//
// Only files of this Offloader are read, opened as lro_extract opens
// them: names of its prefix and pattern, regular files with a single link
// (not a hard link to a file elsewhere), never through a symbolic link,
// never blocking. A read is admitted, bounded and timed as an lro_extract
// call (see [ExtractLimits]): it counts against MaxCalls and
// MaxCallBytes, fairly between sessions, and when they are spent it fails
// (after a second in line at most, one read of a session waiting),
// wrapping [ErrResourceBusy] ("busy,
// retry in N s"); it ends by Timeout; and no
// file larger than MaxFileBytes is read, whole or by lines.
//
// Errors are for the model and wrap [ErrResourceNotFound],
// [ErrResourceTooLarge] or [ErrResourceBusy], or say why the file could
// not be read.
func (h Host) ReadResource(ctx context.Context, uri string) (host.ResourceContents, error) {
	return h.o.extractor.ReadResource(ctx, uri)
}

// ServesResources reports whether resource links go out: ServeResources
// was called (by mcpgo.AddResources, mcpgo.ServerOption or the
// gosdk adapter) and WithoutResourceLinks was not given. Adapters set
// Call.Resources from it.
func (h Host) ServesResources() bool { return h.o.extractor.ServesResources() }

// ServesExtract reports whether lro_extract is served:
// [Host.ExtractToolDefinition] was called. An adapter that cannot ask its
// server whether it lists the tool sets Call.NativeExtract from it.
func (h Host) ServesExtract() bool { return h.o.extractor.Served() }

// newExtractor returns the lro_extract tool of o, once o's templates,
// store and instruments are made.
func (o *Offloader) newExtractor() *extract.Tool {
	memory := make(map[string][]recipes.Recipe, len(o.templates.recipes))
	for d, rs := range o.templates.recipes {
		memory[string(d)] = internalRecipes(rs)
	}
	return extract.New(extract.Env{
		ThresholdTokens:   o.cfg.ThresholdTokens,
		TTL:               o.cfg.TTL(),
		FilePrefix:        o.cfg.FilePrefix,
		FS:                o.opts.fs,
		Store:             o.store,
		Limits:            extract.Limits(o.opts.extractLimits),
		ResourceMaxBytes:  o.opts.resourceMaxBytes,
		ResourcesOff:      o.opts.resourcesOff,
		EstimateTokens:    o.EstimateTokens,
		Logger:            o.logger,
		Extracted:         o.metrics.extracted,
		Unisolated:        o.metrics.unisolated,
		OutcomeStoreError: outcomeStoreError,
		Recipes: func(detail string) ([]recipes.Recipe, bool) {
			rs, ok := memory[detail]
			return rs, ok
		},
	})
}
