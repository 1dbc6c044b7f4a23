package memserver

import "github.com/mcplro/lro"

// Policies returns the offload policies of the server's tools that have
// none built in (the specification's recall_memories, inject_context and
// list_memories do): export_memories returns memories, audit_log and
// memory_graph generic records, a line of text or an element of an array
// each. Give them to the Offloader the server is made with:
//
//	off, err := lro.New(cfg, memserver.Policies()...)
//
// Without them those tools send every result inline, however large.
func Policies() []lro.Option {
	return []lro.Option{
		lro.WithTool(exportTool.name, lro.ToolPolicy{Operation: "export", DefaultDetail: lro.DetailLight}),
		lro.WithTool("audit_log", lro.ToolPolicy{Generic: true}),
		lro.WithTool("memory_graph", lro.ToolPolicy{Generic: true}),
	}
}
