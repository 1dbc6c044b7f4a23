package mcpgo

import (
	"bytes"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/adapt"
	"github.com/mcplro/lro/internal/outputschema"
)

// WidenTool returns t with its output schema widened by
// [lro.WidenOutputSchema] to admit the descriptor, for a server that
// validates results against registered schemas
// (server.WithOutputSchemaValidation):
//
//	s.AddTool(mcpgo.WidenTool(off, tool), handler)
//
// t is returned as it is when it declares no output schema, when
// offloading is disabled, when it is lro_extract or its policy sets
// SkipOutputSchema, or when its schema cannot be widened. Unlike
// [lro.Host.ListedOutputSchema] it widens the schema of a tool without a
// policy of the Offloader, since a tool wrapped one by one with [Wrap] has
// none; widening admits more and rejects nothing. The tool filter of
// [ServerOption] does not widen it again.
func WidenTool(off *lro.Offloader, t mcp.Tool) mcp.Tool {
	schema := outputSchemaOf(t)
	if schema == nil {
		return t
	}
	var w json.RawMessage
	switch h := off.Host(); {
	case h.HasPolicy(t.Name):
		w = h.ListedOutputSchema(t.Name, schema) // its policy decides
	case off.Config().IsEnabled() && t.Name != lro.ExtractToolName:
		w = outputschema.Widened(schema)
	default:
		return t
	}
	if bytes.Equal(w, schema) {
		return t
	}
	return withOutputSchema(t, w)
}

// listed is the tool filter of ServerOption: it lists tools with the
// output schemas of [lro.Host.ListedOutputSchema]. mcp-go runs it on
// tools/list and on every tools/call (with the one tool called), on the
// server's own values: it changes copies.
func listed(off *lro.Offloader, tools []mcp.Tool) []mcp.Tool {
	h := off.Host()
	return adapt.Replaced(tools, func(t mcp.Tool) (mcp.Tool, bool) {
		if !h.HasPolicy(t.Name) { // first: the schema of a typed tool costs a marshal
			return t, false
		}
		schema := outputSchemaOf(t)
		if w := h.ListedOutputSchema(t.Name, schema); !bytes.Equal(w, schema) {
			return withOutputSchema(t, w), true
		}
		return t, false
	})
}

// outputSchemaOf returns the output schema of t as JSON, or nil.
func outputSchemaOf(t mcp.Tool) json.RawMessage {
	if len(t.RawOutputSchema) > 0 {
		return t.RawOutputSchema
	}
	if t.OutputSchema.Type == "" {
		return nil // mcp-go does not send it either
	}
	b, err := json.Marshal(t.OutputSchema)
	if err != nil {
		return nil
	}
	return b
}

// withOutputSchema returns t declaring schema. The typed schema is
// cleared: mcp.Tool refuses to marshal with both set.
func withOutputSchema(t mcp.Tool, schema json.RawMessage) mcp.Tool {
	t.OutputSchema, t.RawOutputSchema = mcp.ToolOutputSchema{}, schema
	return t
}

// inputSchemaOf returns the input schema of t as JSON, or nil: what the
// engine reads of it is whether it declares an argument (see
// host.Call.InputSchema).
func inputSchemaOf(t mcp.Tool) json.RawMessage {
	if len(t.RawInputSchema) > 0 {
		return t.RawInputSchema
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil
	}
	return b
}
