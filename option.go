package lro

import (
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/setting"
	"github.com/mcplro/lro/internal/store"
	"github.com/mcplro/lro/internal/textlines"
	"go.opentelemetry.io/otel/metric"
)

// An Option configures an [Offloader]. Every option is in this file.
//
// One rule for numbers, here as in [Config]: zero (or an option not
// given) takes the default, which each option names, and a negative value
// means none (no cap, no reserve). Defaults are resolved once, when [New]
// builds the Offloader.
type Option func(*options)

type options struct {
	fs            FS
	estimator     Estimator
	hooks         Hooks
	logger        *slog.Logger
	templates     fs.FS
	schemaVersion string
	janitor       bool
	tools         map[string]ToolPolicy
	anyTool       *ToolPolicy
	builtinTools  bool
	extractLimits ExtractLimits
	delivery      func(DeliveryRequest) DeliveryChoice
	meterProvider metric.MeterProvider
	envOff        bool   // WithoutEnv
	envPrefix     string // WithEnvPrefix; empty means DefaultEnvPrefix
	resourcesOff  bool   // WithoutResourceLinks

	// As given (see the rule above); resolve sets the others from them.
	name             string // WithName; empty means the executable's
	maxFileBytes     int64  // WithMaxFileBytes
	minFreeBytes     int64  // WithMinFreeBytes
	maxResultBytes   int64  // WithMaxResultBytes
	resourceMaxBytes int64  // WithResourceMaxBytes

	dir dirLimits // resolved by resolve
}

// dirLimits are the bounds of the output directory, resolved: 0 is none.
type dirLimits struct {
	name      string
	maxFile   int64 // the per-file cap
	maxResult int64 // the cap on a result's size
	minFree   int64 // the free-space reserve; -1: a share of the file system
}

// resolve sets the Offloader's limits from the options as given.
func (o *options) resolve() {
	o.dir.name = o.name
	if o.dir.name == "" {
		o.dir.name = store.DefaultName()
	}
	o.dir.maxFile = setting.Resolve(o.maxFileBytes, DefaultMaxFileBytes)
	o.dir.maxResult = setting.Resolve(o.maxResultBytes, o.dir.maxFile)
	o.dir.minFree = setting.Resolve(o.minFreeBytes, -1) // -1: the share of the file system, known only from statfs
	o.resourceMaxBytes = setting.Resolve(o.resourceMaxBytes, DefaultResourceMaxBytes)
	if o.resourceMaxBytes == 0 {
		o.resourceMaxBytes = extract.MaxResourceRead // none: the hard bound of a read built in memory
	}
	o.resourceMaxBytes = min(max(o.resourceMaxBytes, textlines.MinBudget), extract.MaxResourceRead)
}

// fileCap returns the per-file cap, 0 for none.
func (d dirLimits) fileCap() int64 { return d.maxFile }

// resultCap returns the cap on a result's size, 0 for none.
func (d dirLimits) resultCap() int64 { return d.maxResult }

func defaultOptions() options {
	return options{
		estimator:     HeuristicEstimator{},
		schemaVersion: DefaultSchemaVersion,
		janitor:       true,
		tools:         map[string]ToolPolicy{},
		builtinTools:  true,
	}
}

// WithoutEnv makes [New] take the Config as it is given. By default New
// applies the environment variables of the [prompt.offload] section over
// it (see [Config.ApplyEnv]): the code sets the defaults and an operator's
// environment has the last word. Tests that must not depend on the
// environment they run in use WithoutEnv.
func WithoutEnv() Option {
	return func(o *options) { o.envOff = true }
}

// WithEnvPrefix makes [New] read the environment variables
// {prefix}_PROMPT__OFFLOAD__* instead of ATLATL_PROMPT__OFFLOAD__*.
func WithEnvPrefix(prefix string) Option {
	return func(o *options) { o.envPrefix = prefix }
}

// WithFS makes the Offloader write to fsys instead of the directory named
// by Config.OutputDir. Use an in-memory lrotest.MemFS in tests.
func WithFS(fsys FS) Option {
	return func(o *options) { o.fs = fsys }
}

// WithEstimator replaces the default [HeuristicEstimator], for example with
// a real tokenizer for your model.
func WithEstimator(e Estimator) Option {
	return func(o *options) {
		if e != nil {
			o.estimator = e
		}
	}
}

// WithHooks sets the functions called on events. By default none are.
func WithHooks(h Hooks) Option {
	return func(o *options) { o.hooks = h }
}

// WithLogger logs events to l: offloads at Info, write failures at Warn,
// expired files at Debug. By default events are not logged.
//
// Three notices that a guarantee is weaker than the configuration
// suggests are never silent: without a logger they go to slog.Default().
// They are: a tool's result over the threshold sent inline (once per
// tool and reason, at Warn), a lro_extract query run without a worker
// process or refused for want of one (at most once a minute, at Warn; in
// process by ExtractLimits.InProcess, once at Info), and, once, which
// program the worker processes run when it is this executable (at Info).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithTemplates overrides the recipe and guidance templates with the files
// of the same names in fsys: recipes.tmpl, guidance_shell.tmpl,
// guidance_native.tmpl. Files fsys lacks keep the built-in text (see the
// templates directory of this module).
//
// The files are in Go's text/template syntax, parsed by text/template/parse,
// but lro runs them itself, as a subset of text/template with its
// semantics: text/template's executor looks methods up by name, which makes
// the linker keep every exported method of the whole program (3.0 MiB of a
// 19.4 MB official-SDK server). The subset is: fields (.Count, $.Count), if
// / else if / else, with / else, pipelines with |, string, number and bool
// constants, and the functions and, or, not, eq, ne, lt, le, gt, ge, len,
// print, printf, println, duration and bytes. Anything else (range,
// template, define, block, variables other than $, nil, the functions
// call, index, slice, html, js and urlquery, giving arguments to a field)
// fails New with an error naming the file, the line and the construct, as
// do a syntax error and a field the data lacks; the methods of a field's
// value (.TTL.Hours) are not called. The data are those the built-in files
// document in their opening comments. A rendering prints at most 64 KiB,
// and no printf width or precision exceeds it (nor comes from an
// argument, *): a template past it fails New, or the render, with an
// error naming it.
func WithTemplates(fsys fs.FS) Option {
	return func(o *options) { o.templates = fsys }
}

// WithSchemaVersion sets the schema_version written to file headers. The
// default is [DefaultSchemaVersion].
func WithSchemaVersion(v string) Option {
	return func(o *options) { o.schemaVersion = v }
}

// WithoutJanitor does not start the background janitor: call
// [Offloader.Sweep] from your own scheduler instead (the specification's
// offload_cleanup custodial task).
func WithoutJanitor() Option {
	return func(o *options) { o.janitor = false }
}

// WithTool sets the policy of the tool named name for mcpgo.Middleware,
// replacing any built-in one.
func WithTool(name string, p ToolPolicy) Option {
	return func(o *options) { o.tools[name] = p }
}

// WithAnyTool offloads every tool that has no policy of its own under p.
// Set p.Generic unless those tools return MIF memories. By default tools
// without a policy pass through.
func WithAnyTool(p ToolPolicy) Option {
	return func(o *options) { o.anyTool = &p }
}

// WithoutBuiltinTools drops the built-in policies of recall_memories,
// inject_context, list_memories and the search tools.
func WithoutBuiltinTools() Option {
	return func(o *options) { o.builtinTools = false }
}

// WithExtractLimits bounds the queries of the lro_extract tool (see
// mcpgo.AddExtractTool). By default a query may run 10 seconds and
// grow the heap by 512 MiB.
func WithExtractLimits(l ExtractLimits) Option {
	return func(o *options) { o.extractLimits = l }
}

// WithDelivery chooses the delivery of each offloaded result, per tool and
// per client. Without it every result gets Config.Delivery, whoever the
// client: descriptor unless configured otherwise. A function returning
// the zero DeliveryChoice keeps that default. It is called once per result
// over the threshold (or over the session budget), concurrently.
//
// For example, compact pointers for a client known to read resources,
// and inline truncation for one that has neither a shell nor a way to
// follow a pointer:
//
//	lro.WithDelivery(func(r lro.DeliveryRequest) lro.DeliveryChoice {
//		switch {
//		case r.Client.Name == "web-chat" && !r.NativeExtract && !r.Resources:
//			return lro.DeliveryChoice{Mode: lro.DeliveryTruncate}
//		case r.Client.Name == "claude-code":
//			return lro.DeliveryChoice{Mode: lro.DeliveryCompact}
//		}
//		return lro.DeliveryChoice{}
//	})
func WithDelivery(choose func(DeliveryRequest) DeliveryChoice) Option {
	return func(o *options) { o.delivery = choose }
}

// WithName sets the name the Offloader goes by in its directory; by
// default it is the executable's base name. Every file carries a tag
// derived from the name (in the random part of the ULID of its file name),
// and an Offloader reads (lro_extract), evicts and expires only files of
// its own name: servers of different names may share a directory without
// touching each other's files, while a new process of the same server
// still cleans up the files of earlier ones. Give each server its MCP
// server name (the same in every process of it), for example when several
// servers are one executable run with different arguments.
func WithName(name string) Option {
	return func(o *options) { o.name = name }
}

// WithMaxFileBytes caps the size of one offloaded file: a result whose
// file would be larger gets the truncated inline fallback with a warning
// ([ErrFileTooLarge]). The default (n == 0) is [DefaultMaxFileBytes]; n < 0
// means no cap besides Config.MaxDirBytes.
func WithMaxFileBytes(n int64) Option {
	return func(o *options) { o.maxFileBytes = n }
}

// WithMinFreeBytes keeps n bytes free on the file system of the output
// directory: a result whose file would leave less gets the truncated
// inline fallback with a warning ([ErrLowDiskSpace]); nothing is evicted
// for it, since the space may be another program's to free. The default
// (n == 0) keeps 5% of the file system free, at most 1 GiB; n < 0 means no
// reserve. The free space is read with statfs on Linux, macOS and
// FreeBSD, and through an FS's DiskSpace method (see [FS]); elsewhere
// there is no reserve.
func WithMinFreeBytes(n int64) Option {
	return func(o *options) { o.minFreeBytes = n }
}

// WithMaxResultBytes caps the size of a tool result the middleware
// offloads: a result whose text or structured content is larger gets the
// truncated inline fallback with a warning and a WriteFailedEvent
// ([ErrResultTooLarge]), and no file. Finding its records costs no memory
// beyond the result itself, but writing and describing it costs time and
// disk that one call should not take. The default (n == 0) is the per-file
// cap (see [WithMaxFileBytes]), whose file such a result would not fit
// anyway; n < 0 means no cap.
func WithMaxResultBytes(n int64) Option {
	return func(o *options) { o.maxResultBytes = n }
}

// WithoutResourceLinks turns the MCP-native pointer off: offloaded results
// carry no resource link, and [Host.ServeResources] (and so
// mcpgo.AddResources and the go-sdk adapter's AddResources)
// registers nothing. By default a server that registers the resource
// templates answers resources/read for offloaded files and links every
// offloaded result to its file.
func WithoutResourceLinks() Option {
	return func(o *options) { o.resourcesOff = true }
}

// WithResourceMaxBytes sets the most resources/read returns at once: a
// whole file up to n bytes, and a range of lines up to n bytes (a longer
// line is cut). A larger file gets an error that points to line ranges and
// lro_extract. The default (n == 0) is [DefaultResourceMaxBytes] (1 MiB);
// n < 0 means the most a read may ever be, 1 GiB, since a read is built in
// memory; n is at least 256 bytes.
func WithResourceMaxBytes(n int64) Option {
	return func(o *options) { o.resourceMaxBytes = n }
}

// WithMeterProvider records the Offloader's metrics through mp, the
// OpenTelemetry metric API: the library depends on the API only, and the
// MeterProvider you pass picks the SDK and the exporter. Without it
// nothing is recorded. The instruments, all under [MeterName]:
//
//	lro.offloads              results offloaded, by operation
//	lro.offload.bytes         bytes written to offloaded files
//	lro.offload.tokens        estimated tokens kept out of the context
//	lro.offload.duration      time to write and publish a file (s), by outcome
//	                          (ok, or fallback when the write failed)
//	lro.fallbacks             writes that failed: truncated inline results
//	lro.files.removed         files deleted, by reason (expired, evicted)
//	lro.extract.calls         lro_extract calls, by outcome (ok, refused, or
//	                          store_error when an object store failed to answer)
//	lro.extract.duration      time to answer an lro_extract call (s)
//	lro.store.errors          failures of an object store, by during (offload,
//	                          lro_extract, resources/read, janitor) and kind
//	                          (timeout, permission, config, unavailable); not the calls
//	                          that fall back at once while a store is down
//	lro.store.state_changes   a store found down, or answering again, by state
//	                          (down, up)
//	lro.extract.unisolated    lro_extract queries run without a worker process
//	                          (reason in_process: ExtractLimits.InProcess), or
//	                          refused for want of one (no_worker, unsupported)
//
// The durations are histograms in seconds with the bucket bounds of
// [DurationBuckets] (0.5 ms to 60 s), so that their quantiles mean
// something: the SDK's default bounds (0, 5, 10, 25, ... 10000) would put
// nearly every observation in the first bucket. A View of the SDK can
// still replace them.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.meterProvider = mp }
}

// checkPolicies refuses tool policies that could never offload, at New
// rather than silently at every call.
func (o *options) checkPolicies() error {
	check := func(tool string, p ToolPolicy) error {
		if p.Operation != "" {
			if err := store.CheckName(p.Operation); err != nil {
				return fmt.Errorf("lro: tool %s: invalid operation %q: %v", tool, p.Operation, err)
			}
		}
		if p.DefaultDetail != "" {
			if _, err := ParseDetail(string(p.DefaultDetail)); err != nil {
				return fmt.Errorf("lro: tool %s: %v", tool, err)
			}
		}
		return nil
	}
	for name, p := range o.tools {
		if err := check(name, p); err != nil {
			return err
		}
	}
	if o.anyTool != nil {
		return check("(any)", *o.anyTool)
	}
	return nil
}
