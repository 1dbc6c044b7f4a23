// Package memserver is the example memory server: an in-memory store of
// MIF memories served on either Go SDK, mcp-go ([New]) or the official SDK
// ([NewOfficial]), with Large Result Offloading added by one option. Each
// tool is written once, over decoded arguments, and registered on each SDK
// by a few lines that only translate types.
//
// It is a package, not only a command, so that tests can run the very same
// server in process.
//
// # Tools
//
// The server has a tool of every shape a result can take:
//
//   - recall_memories: a JSON object whose results array holds the hits,
//     {"query", "count", "results": [{"score", "memory"}]}. The
//     specification's tool, like the next two.
//   - inject_context: a text block of the memories relevant to a query,
//     within a token budget; the handler hands its memories to lro.Collect.
//   - list_memories: a page of memories and a cursor,
//     {"total", "memories", "next_cursor"}.
//   - export_memories: a typed tool with an output schema,
//     {"count", "memories"}: mcp.WithOutputSchema and
//     mcp.NewStructuredToolHandler on mcp-go, mcp.AddTool on the official
//     SDK.
//   - audit_log: plain text, one event a line.
//   - memory_graph: an object with two large arrays, nodes and edges, and
//     small fields beside them, {"generated", "limit", "nodes", "edges"}.
//
// Every result is deterministic: a function of the store and the
// arguments only.
//
// # Offloading
//
// The Offloader offloads only the tools it has a policy for. The
// specification's tools have one built in; the others get theirs from
// [Policies]:
//
//	off, err := lro.New(cfg, memserver.Policies()...)
//	if err != nil { ... }
//	s := memserver.New(store, off)
//
// # Tasks
//
// On mcp-go, recall_memories may also run as a task (its task support is
// optional, and [New] enables the task capabilities): a client that calls
// it with a task gets the task at once and the result, a descriptor when
// it is large, from tasks/result. The offload middleware runs for a tool
// run as a task as for a call. The official Go SDK (v1.8.0) has no tasks:
// on [NewOfficial] every call runs at once.
package memserver
