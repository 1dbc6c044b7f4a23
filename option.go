package lro

import (
	"fmt"
	"go.opentelemetry.io/otel/metric"
	"io/fs"
	"log/slog"
)

// An Option configures an [Offloader].
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
	dir           dirOptions // quota_option.go
	meterProvider metric.MeterProvider
	// resource_option.go
	resourcesOff     bool
	resourceMaxBytes int64  // 0: DefaultResourceMaxBytes
	envOff           bool   // WithoutEnv
	envPrefix        string // WithEnvPrefix; empty means DefaultEnvPrefix
}

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
// expired files at Debug. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithTemplates overrides the recipe and guidance templates with the files
// of the same names in fsys: recipes.tmpl, guidance_shell.tmpl,
// guidance_native.tmpl. Files fsys lacks keep the built-in text (see the
// templates directory of this module).
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

// WithTool sets the policy of the tool named name for [Offloader.Middleware],
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
// [Offloader.AddExtractTool]). By default a query may run 10 seconds and
// grow the heap by 512 MiB.
func WithExtractLimits(l ExtractLimits) Option {
	return func(o *options) { o.extractLimits = l }
}

// checkPolicies refuses tool policies that could never offload, at New
// rather than silently at every call.
func (o *options) checkPolicies() error {
	check := func(tool string, p ToolPolicy) error {
		if p.Operation != "" {
			if err := checkName(p.Operation); err != nil {
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
