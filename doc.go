// Package lro implements Large Result Offloading for Go MCP servers: the
// host-neutral engine, which adapters put in front of an SDK's tools
// (package github.com/mcplro/lro/mcpgo for github.com/mark3labs/mcp-go,
// package github.com/mcplro/lro/gosdk for the official SDK).
//
// A tool result too large for a model's context (hundreds of memories,
// thousands of rows) is written, complete, to a JSONL file: one header
// line, then one record per line, named
// {output_dir}/{prefix}-{operation}-{ULID}.jsonl. The tool returns a compact
// [OffloadResponse] instead: a summary, the file path, a line schema, ten
// ready-to-run jq recipes and guidance text. A janitor deletes files once
// their TTL has passed. If the file cannot be written, the call still
// succeeds with an inline result truncated to the threshold.
//
// # Wiring
//
// Most servers wrap their tool handlers with an adapter's middleware, here
// mcp-go's (package mcpgo):
//
//	off, err := lro.New(lro.DefaultConfig())
//	if err != nil { ... }
//	defer off.Close()
//	s := server.NewMCPServer("memory", "1.0.0", mcpgo.ServerOption(off))
//
// Only tools with a [ToolPolicy] are offloaded; the others pass through
// untouched. The specification's memory tools (recall_memories,
// inject_context, list_memories, search_*) have their policies built in.
// Any other tool needs one, for example a get_logs tool returning log
// records, which are not memories (Generic infers their line schema and
// recipes from the records):
//
//	off, err := lro.New(lro.DefaultConfig(),
//		lro.WithTool("get_logs", lro.ToolPolicy{Generic: true}))
//
// [WithAnyTool] gives a policy to every tool without one, and
// [WithoutBuiltinTools] drops the built-in policies, for a server whose
// tools only share the memory tools' names:
//
//	off, err := lro.New(lro.DefaultConfig(),
//		lro.WithAnyTool(lro.ToolPolicy{Generic: true}),
//		lro.WithoutBuiltinTools())
//
// A tool without a policy whose result is over the threshold is logged
// once, with this fix.
//
// A tool called as a task is offloaded too, and tasks/result returns the
// descriptor. An ordinary tool that supports tasks needs nothing more:
// mcp-go runs it through the middleware. A task tool, registered with
// AddTaskTool, is not reached by tool middleware: wrap its handler with
// mcpgo.TaskHandler, or mcpgo.WrapTask to give it a policy of its own, as
// mcpgo.Wrap does for an ordinary tool:
//
//	s.AddTaskTool(exportTool, mcpgo.TaskHandler(off, export))
//
// A task tool left unwrapped whose result goes out over the threshold is
// logged once, with this fix, by the hooks of mcpgo.ServerOption.
//
// Servers on the official Go SDK (github.com/modelcontextprotocol/go-sdk)
// use package github.com/mcplro/lro/gosdk, a thin adapter over the same
// host-neutral core, [Host.Serve]: gosdk.Install(s, off). An adapter
// for another host translates its requests and results to [host.Call] and
// [host.Result] (package github.com/mcplro/lro/host) and back.
//
// The engine works without any MCP server too: build a [ResultSet] and call
// [Offloader.Offload].
//
// # Threshold
//
// A result set is offloaded when its estimated size is above
// Config.ThresholdTokens (1600 by default) and stays inline at or below it.
// The estimate covers the whole set, as the model would receive it; see
// [HeuristicEstimator] for the rule and [WithEstimator] to plug in a real
// tokenizer.
//
// # Result shapes
//
// What is judged is the result's structured content, or its text items and
// embedded text resources; images and other items stay as they are. The
// records are a JSON array, the large fields of a JSON object (nested ones
// too: "data.items", see [ToolPolicy].RecordsField), the items themselves,
// or the lines of a text. A result with several large fields is written
// one file per field, all or none, listed in [OffloadResponse].Sections.
// A page with an active cursor stays inline unless the handler hands the
// full set to [Collect].
//
// # Files
//
// Files are private (0600), created exclusively under a temporary name,
// and published by an atomic link or rename, so no reader ever sees a
// partial file. All access goes through an [FS]: [DirFS] confines it to one
// directory with os.Root (no "..", no absolute path, no symbolic link
// leads out); lrotest.MemFS (package lrotest) keeps files in memory and injects faults for tests.
//
// # Recipes and guidance
//
// Recipes and guidance are rendered from template files embedded in the
// package (the templates directory of the module); [WithTemplates]
// overrides them. Recipes 1 to 8 use only light fields; 9 and 10 adapt to
// the detail level. Results of tools that do not return memories get a
// schema and recipes inferred from the fields their records really have.
//
// # Native extraction and the proxy
//
// mcpgo.AddExtractTool (gosdk.AddExtractTool) registers lro_extract, which
// runs the recipes, a jq filter, a grep or a range of lines over an
// offloaded file for models without a shell: in worker processes bounded in
// time and memory (the lro-worker program when installed, see
// [ExtractLimits]), never in the server unless [ExtractLimits].InProcess
// says so. Package github.com/mcplro/lro/proxy (and the lro-proxy command)
// puts a local stdio server in front of a remote streamable-HTTP server and
// offloads on the local disk; servers using this package return full
// results to such a proxy, which they recognize by mcpgo.IsProxyClient
// (gosdk.IsProxyClient).
//
// # Events
//
// [Hooks] are called when a file is offloaded, when a write fails and when
// a file expires; [WithLogger] logs the same events with log/slog.
package lro
