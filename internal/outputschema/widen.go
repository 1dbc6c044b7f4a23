package outputschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mcplro/lro/internal/records"
)

// descriptorTitle marks the descriptor branch of a widened schema, so that
// widening twice is seen and skipped (a proxy in front of an lro server,
// a tool registered through mcpgo.WidenTool and then listed).
const descriptorTitle = "lro offload descriptor"

// descriptorSchema admits every descriptor the library sends. It is loose
// on purpose: it requires only what identifies a descriptor, so that fields
// added later (another delivery mode, resource links) do not make clients
// that cached a tool list reject new descriptors.
const descriptorSchema = `{
	"title": "` + descriptorTitle + `",
	"description": "The result was too large to return inline: it was written to the JSONL file at file_path, one record a line; summary, line_schema, jq_recipes and guidance say how to read it.",
	"type": "object",
	"required": ["offloaded", "file_path"],
	"properties": {
		"offloaded": {"const": true},
		"file_path": {"type": "string", "description": "Absolute path of the JSONL file."},
		"summary": {"type": "object", "description": "What the file holds: count, estimated_tokens, operation and more."},
		"line_schema": {"description": "JSON Schema of one record line."},
		"jq_recipes": {"type": "array", "description": "Ready-to-run commands over the file."},
		"guidance": {"type": "string"},
		"section": {"type": "string"},
		"sections": {"type": "array"}
	},
	"additionalProperties": true
}`

// rootKeywords are moved from the tool's schema to the widened root: the
// keywords that say how the document is read and what its references
// point to.
var rootKeywords = []string{"$schema", "$id", "$defs", "definitions"}

// Widen is lro.WidenOutputSchema: it returns an output schema that
// admits both what schema admits and an offload descriptor.
func Widen(schema json.RawMessage) (json.RawMessage, error) {
	var orig map[string]any
	if err := decodeSchema(schema, &orig); err != nil {
		return nil, err
	}
	if isWidened(orig) {
		return schema, nil
	}
	var desc map[string]any
	if err := decodeSchema(json.RawMessage(descriptorSchema), &desc); err != nil {
		panic("lro: descriptor schema: " + err.Error()) // a constant of this file
	}
	root := map[string]any{}
	if t, ok := orig["type"]; !ok || t == "object" {
		root["type"] = "object"
	}
	for _, k := range rootKeywords {
		if v, ok := orig[k]; ok {
			root[k] = v
			delete(orig, k)
		}
	}
	rebase(orig, true)
	for _, k := range []string{"$defs", "definitions"} {
		if defs, ok := root[k].(map[string]any); ok {
			for _, d := range defs {
				rebase(d, false)
			}
		}
	}
	root["anyOf"] = []any{orig, desc}
	return records.MarshalText(root)
}

// decodeSchema decodes a schema that must be a JSON object, keeping its
// numbers as they are written (a maximum of 2^53+1 stays that).
func decodeSchema(schema json.RawMessage, v *map[string]any) error {
	t := bytes.TrimSpace(schema)
	if len(t) == 0 {
		return errors.New("lro: output schema is empty")
	}
	if t[0] != '{' {
		return fmt.Errorf("lro: output schema is not a JSON object: it starts with %q", t[:1])
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("lro: output schema is not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("lro: output schema has data after its JSON object")
	}
	return nil
}

// isWidened reports whether a decoded schema is one Widen made.
func isWidened(s map[string]any) bool {
	branches, ok := s["anyOf"].([]any)
	if !ok || len(branches) != 2 {
		return false
	}
	d, ok := branches[1].(map[string]any)
	return ok && d["title"] == descriptorTitle
}

// dataKeywords hold JSON values, not schemas: a "$ref" inside them is data.
var dataKeywords = map[string]bool{"const": true, "enum": true, "default": true, "examples": true}

// nameKeywords hold objects of named subschemas: their keys are names, not
// keywords (a property may be called "enum").
var nameKeywords = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true, "dependencies": true}

// rebase rewrites the local references of a schema moved from the root of
// its document into anyOf[0]: "#" and "#/..." (except into the moved
// $defs and definitions) now need the "/anyOf/0" prefix. A subschema with
// its own $id is a document of its own, whose references stay as they are.
func rebase(v any, root bool) {
	s, ok := v.(map[string]any)
	if !ok {
		return // true, false, or not a schema
	}
	if _, ok := s["$id"].(string); ok && !root {
		return
	}
	for k, e := range s {
		switch {
		case k == "$ref":
			if ref, ok := e.(string); ok {
				s[k] = rebaseRef(ref)
			}
		case nameKeywords[k]:
			if m, ok := e.(map[string]any); ok {
				for _, sub := range m {
					rebase(sub, false)
				}
			}
		case dataKeywords[k]:
		default: // a subschema, a list of them, or an annotation
			if list, ok := e.([]any); ok {
				for _, sub := range list {
					rebase(sub, false)
				}
			} else {
				rebase(e, false)
			}
		}
	}
}

func rebaseRef(ref string) string {
	switch {
	case ref == "#":
		return "#/anyOf/0"
	case strings.HasPrefix(ref, "#/$defs/"), strings.HasPrefix(ref, "#/definitions/"):
		return ref
	case strings.HasPrefix(ref, "#/"):
		return "#/anyOf/0" + ref[1:]
	}
	return ref
}

// widenCache memoizes Widen, a pure function of the bytes:
// mcp-go runs tool filters on every call, not only on tools/list. It is
// shared by all Offloaders, and emptied when full so that a server whose
// tools keep changing does not grow it without bound.
var widenCache struct {
	sync.Mutex
	m map[string]json.RawMessage // original schema: widened, or nil when it cannot be
}

const widenCacheSize = 1024

// Widened returns schema widened, or schema when it cannot be.
func Widened(schema json.RawMessage) json.RawMessage {
	widenCache.Lock()
	w, ok := widenCache.m[string(schema)]
	widenCache.Unlock()
	if !ok {
		w, _ = Widen(schema)
		w = bytes.Clone(w) // the caller's own bytes, when already widened
		widenCache.Lock()
		if widenCache.m == nil || len(widenCache.m) >= widenCacheSize {
			widenCache.m = make(map[string]json.RawMessage)
		}
		widenCache.m[string(schema)] = w
		widenCache.Unlock()
	}
	if w == nil {
		return schema
	}
	return w
}
