package lro

import (
	"encoding/json"
	"strings"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/outputschema"
	"github.com/mcplro/lro/internal/records"
)

// ToolPolicy says how the results of one tool are offloaded.
//
// Wiring lro in changes no tool's contract: every argument reaches the
// handler as the client sent it. lro reads a "detail" argument, the level
// its file is written at, when it is one of lro's levels ("light",
// "medium", "full"), or when the tool's input schema declares no "detail"
// of its own, in which case any other value is refused with a tool error
// (a model asked for a level that does not exist). A value of the tool's
// own ("brief", with "detail" in its input schema) is the tool's: the
// result is judged at DefaultDetail.
//
// The built-in policies of the specification's tools (recall_memories,
// inject_context, list_memories, and search tools) judge records by their
// shape, not by the tool's name: records in the shape of MIF memories get
// the memory line schema and recipes, any other records the generic ones,
// inferred from their own fields (see Generic).
type ToolPolicy struct {
	// Operation names the operation in the file name and the header:
	// "recall", "inject", "list", "search", or the tool's own. Empty means
	// the tool name, with characters other than letters, digits and '_'
	// replaced by '_'.
	Operation string
	// DefaultDetail is the detail level when the call has no detail
	// argument, or one of the tool's own. Empty means light.
	DefaultDetail Detail
	// Generic marks a tool whose records are not MIF memories: its line
	// schema and recipes are inferred from its records, and a detail
	// argument is not read (it is the tool's own). A policy of yours that
	// is not generic declares MIF memories, and still offloads the lines
	// of a text, and the sections of a result beside its memories, as
	// generic; the built-in policies judge by shape (see above).
	Generic bool
	// RecordsField is the path of the field that holds the records when
	// the result is a JSON object, its names joined by dots, an array's
	// element by its index in brackets: "results", "data.items",
	// "data.statements[0].rows". Empty means: found by size. Every field
	// of the result larger than about 256 tokens is offloaded, each to a
	// file of its own (an array one record per element, a long string one
	// per line, objects searched for arrays at any depth, and so are the
	// elements of an array of a few objects that hold arrays of records,
	// as a SQL server's statements hold their rows); the largest is the
	// descriptor's file, a known records field ("results", "memories",
	// "hits", "items", "records", "data", "rows") winning among fields of
	// a similar size, and the others are listed in its sections. Smaller
	// fields are copied into the summary's extra.
	RecordsField string
	// SkipOutputSchema sends the results of a tool that declares an
	// output schema inline, as they are, and leaves the schema its clients
	// see as declared. By default such a tool is offloaded like any other,
	// and the schema it lists is widened to admit the descriptor too (see
	// [WidenOutputSchema]), so that clients which validate structured
	// content accept both.
	SkipOutputSchema bool

	// detect judges the records by their shape: MIF memories when they
	// look like them, generic otherwise. The built-in policies have it:
	// a tool's name says nothing of its records' shape.
	detect bool
	// search is the built-in policy of search tools, which may search
	// anything: its generic records take the tool's name as operation, and
	// a detail argument that is not a level is the tool's own even when
	// its input schema is not known.
	search bool
}

// builtinPolicy returns the policy of the specification's tools.
func builtinPolicy(tool string) (ToolPolicy, bool) {
	switch tool {
	case "recall_memories":
		return ToolPolicy{Operation: "recall", DefaultDetail: DetailLight, detect: true}, true
	case "inject_context":
		return ToolPolicy{Operation: "inject", DefaultDetail: DetailMedium, detect: true}, true
	case "list_memories":
		return ToolPolicy{Operation: "list", DefaultDetail: DetailLight, detect: true}, true
	}
	if tool == "search" || strings.HasPrefix(tool, "search_") || strings.HasSuffix(tool, "_search") {
		return ToolPolicy{Operation: "search", DefaultDetail: DetailLight, detect: true, search: true}, true
	}
	return ToolPolicy{}, false
}

// operationFor returns the policy's operation, derived from the tool name
// when empty.
func (p ToolPolicy) operationFor(tool string) string {
	if p.Operation != "" {
		return p.Operation
	}
	b := []byte(tool)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "tool"
	}
	return string(b[:min(len(b), 64)])
}

// policyFor returns the policy of tool, if it has one.
func (o *Offloader) policyFor(tool string) (ToolPolicy, bool) {
	if tool == ExtractToolName {
		return ToolPolicy{}, false // no references to references
	}
	if p, ok := o.opts.tools[tool]; ok {
		return p, true
	}
	if o.opts.builtinTools {
		if p, ok := builtinPolicy(tool); ok {
			return p, true
		}
	}
	if p := o.opts.anyTool; p != nil {
		return *p, true
	}
	return ToolPolicy{}, false
}

// HasPolicy reports whether the Offloader judges the results of tool
// under a policy of its own: one given with [WithTool], a built-in one, or
// the [WithAnyTool] policy. It is for host adapters that judge the tools
// without one under a policy of theirs (with mcpgo.Wrap and
// mcpgo.WidenTool), as the proxy package does for every remote tool.
func (h Host) HasPolicy(tool string) bool {
	o := h.o
	_, ok := o.policyFor(tool)
	return ok
}

// looksLikeMemories reports whether records are in the shape of the
// specification's MIF memories: objects with the string fields id, title,
// namespace and memory_type, the last of which no other shape has, in at
// least nine in ten of the first hundred. A search tool's tickets, or a
// memory server's own records ({id, title, content, namespace, tags,
// created, score}), are not: the memory recipes (filter by memory type, by
// the "_semantic" namespace) would answer nothing on them, and their line
// schema would name fields they lack.
func looksLikeMemories(src records.Source) bool {
	if src.Count() == 0 {
		return false
	}
	seen, shaped := 0, 0
	_ = src.Each(func(i int, r *records.Record) bool {
		n := 0
		err := jsonscan.Fields(r.Line, func(kv jsonscan.Field) bool {
			switch string(kv.Key) {
			case "id", "title", "namespace", "memory_type":
				if len(kv.Value) > 0 && kv.Value[0] == '"' {
					n++
				}
			}
			return true
		})
		seen++
		if err == nil && n == 4 {
			shaped++
		}
		// Stop once the answer is known, or at a hundred.
		return seen < memorySample && (seen-shaped)*10 <= memorySample
	})
	return shaped*10 >= seen*9
}

// memorySample is how many records looksLikeMemories reads at most.
const memorySample = 100

// genericFallback returns the operation of a detecting policy's records
// when they are not memories: the WithAnyTool policy's operation if it
// names one, else the tool's own name.
func (o *Offloader) genericFallback(tool string) string {
	if p := o.opts.anyTool; p != nil && p.Operation != "" {
		return p.Operation
	}
	return ToolPolicy{}.operationFor(tool)
}

// WidenOutputSchema returns an output schema that admits both what schema
// admits and an offload descriptor:
//
//	{"type":"object","anyOf":[<schema>, <descriptor schema>]}
//
// The $schema, $id, $defs and definitions of schema move to the new root,
// and its other local references ("#", "#/properties/...") are rewritten
// to point into the first branch, so that every reference still resolves.
// A schema whose type is something other than "object" gets no root type,
// so that its values stay valid. A schema already widened by this function
// is returned as it is. Property order is not kept, and numbers are kept
// exactly.
func WidenOutputSchema(schema json.RawMessage) (json.RawMessage, error) {
	return outputschema.Widen(schema)
}

// ListedOutputSchema returns the output schema clients should see for tool,
// whose own output schema is schema: widened by [WidenOutputSchema] when
// the Offloader may offload the tool's results (offloading is enabled, and
// the tool has a policy that does not set SkipOutputSchema; never
// lro_extract), schema itself otherwise, and also when schema cannot be
// widened. An adapter calls it when it lists tools; the adapters of this
// module do. The returned bytes may be shared: do not modify them.
func (h Host) ListedOutputSchema(tool string, schema json.RawMessage) json.RawMessage {
	o := h.o
	if len(schema) == 0 || !o.widens(tool) {
		return schema
	}
	return outputschema.Widened(schema)
}

// widens reports whether the listed output schema of tool is widened.
func (o *Offloader) widens(tool string) bool {
	p, ok := o.policyFor(tool)
	return ok && o.cfg.IsEnabled() && !p.SkipOutputSchema
}
