package memserver

import (
	"encoding/json"
	"slices"
)

// prop is one argument of a tool: its JSON type, description and default.
type prop struct {
	typ         string
	description string
	def         any
}

type props map[string]prop

// property is an argument as an input schema states it.
type property struct {
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Default     any      `json:"default,omitempty"`
	Enum        []string `json:"enum,omitempty"`
}

// detailProperty is the detail argument that every tool returning
// memories takes.
var detailProperty = property{Type: "string", Enum: []string{"light", "medium", "full"},
	Description: "Detail level of each memory: light (ids, titles, namespaces, tags, dates), medium (adds content, summary, confidence) or full (the complete MIF object)."}

// schema returns the input schema of a tool with the given arguments.
func schema(p props, required ...string) json.RawMessage {
	return schemaOf(p, nil, required)
}

// memorySchema returns the input schema of a tool that returns memories:
// its arguments plus detail.
func memorySchema(p props, required ...string) json.RawMessage {
	return schemaOf(p, map[string]property{"detail": detailProperty}, required)
}

func schemaOf(p props, extra map[string]property, required []string) json.RawMessage {
	s := struct {
		Type       string              `json:"type"`
		Properties map[string]property `json:"properties"`
		Required   []string            `json:"required,omitempty"`
	}{Type: "object", Properties: map[string]property{}, Required: slices.Clone(required)}
	for name, a := range p {
		s.Properties[name] = property{Type: a.typ, Description: a.description, Default: a.def}
	}
	for name, a := range extra {
		s.Properties[name] = a
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // the schemas are literals of this package
	}
	return b
}
