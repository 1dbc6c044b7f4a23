package lro_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/mcplro/lro"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compileSchema compiles a JSON Schema as a validating client would.
func compileSchema(t *testing.T, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("mem:///schema.json", doc))
	s, err := c.Compile("mem:///schema.json")
	require.NoError(t, err, "%s", schema)
	return s
}

// admits reports whether s admits the JSON value v.
func admits(t *testing.T, s *jsonschema.Schema, v string) bool {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(v)))
	require.NoError(t, err, v)
	return s.Validate(inst) == nil
}

// realDescriptor returns the descriptor the library writes for 600
// generic rows, as it goes out.
func realDescriptor(t *testing.T) string {
	t.Helper()
	o := newOffloader(t, nil)
	recs := make([]json.RawMessage, 600)
	for i := range recs {
		recs[i] = json.RawMessage(`{"id":` + strconv.Itoa(i) + `,"title":"a row of the report, long enough to count"}`)
	}
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "report", Records: recs, Generic: true})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)
	b, err := json.Marshal(out.Response)
	require.NoError(t, err)
	return string(b)
}

// typedSchema is shaped as the SDKs infer it for a struct with a nested
// type: the row is in $defs, referenced from the properties, and the
// document names its draft.
const typedSchema = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"$defs": {"row": {"type": "object", "properties": {"id": {"type": "integer"}, "title": {"type": "string"}}, "required": ["id"], "additionalProperties": false}},
	"type": "object",
	"properties": {"rows": {"type": "array", "items": {"$ref": "#/$defs/row"}}, "total": {"type": "integer", "maximum": 9007199254740993}},
	"required": ["rows"],
	"additionalProperties": false
}`

func TestWidenOutputSchemaAdmitsBoth(t *testing.T) {
	w, err := lro.WidenOutputSchema(json.RawMessage(typedSchema))
	require.NoError(t, err)

	var root map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(w, &root))
	assert.JSONEq(t, `"object"`, string(root["type"]))
	assert.JSONEq(t, `"https://json-schema.org/draft/2020-12/schema"`, string(root["$schema"]), "the draft moves to the root")
	assert.Contains(t, string(root["$defs"]), `"row"`, "$defs move to the root, where #/$defs/row points")
	var branches []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(root["anyOf"], &branches))
	require.Len(t, branches, 2)
	assert.NotContains(t, branches[0], "$defs")
	assert.NotContains(t, branches[0], "$schema")
	assert.Contains(t, string(w), `9007199254740993`, "numbers are kept exactly")

	s := compileSchema(t, w)
	assert.True(t, admits(t, s, `{"rows":[{"id":1,"title":"a"},{"id":2}],"total":2}`), "the tool's own result")
	assert.True(t, admits(t, s, realDescriptor(t)), "a descriptor the library wrote")
	assert.True(t, admits(t, s, `{"offloaded":true,"file_path":"/tmp/x.jsonl","summary":{"count":1},"mode":"compact","resource_link":{"uri":"file:///tmp/x.jsonl"}}`),
		"descriptors with fields not yet written")
	assert.False(t, admits(t, s, `{"rows":[{"id":"one"}]}`), "the row's $defs schema still applies")
	assert.False(t, admits(t, s, `{"rows":[],"extra":1}`), "neither the result nor a descriptor")
	assert.False(t, admits(t, s, `{"offloaded":false,"file_path":"/tmp/x.jsonl"}`))
	assert.False(t, admits(t, s, `{"offloaded":true,"summary":{}}`), "a descriptor has a file_path")
	assert.False(t, admits(t, s, `[]`))

	orig := compileSchema(t, json.RawMessage(typedSchema))
	assert.False(t, admits(t, orig, realDescriptor(t)), "the tool's own schema rejects the descriptor: why widening is needed")
}

// References to anywhere in the tool's schema but its $defs are rewritten
// into the branch it moved to: "#" (a recursive type) and "#/properties/...".
func TestWidenOutputSchemaRebasesReferences(t *testing.T) {
	tree := `{
		"type": "object",
		"properties": {
			"name": {"type": "string"},
			"alias": {"$ref": "#/properties/name"},
			"children": {"type": "array", "items": {"$ref": "#"}},
			"enum": {"const": {"$ref": "#"}}
		},
		"required": ["name"],
		"additionalProperties": false
	}`
	w, err := lro.WidenOutputSchema(json.RawMessage(tree))
	require.NoError(t, err)
	assert.Contains(t, string(w), `"const":{"$ref":"#"}`, "data is not a reference, even under a property named enum")
	s := compileSchema(t, w)
	assert.True(t, admits(t, s, `{"name":"root","alias":"r","children":[{"name":"leaf","children":[]}]}`))
	assert.False(t, admits(t, s, `{"name":"root","alias":1}`), "#/properties/name still means the name")
	assert.False(t, admits(t, s, `{"name":"root","children":[{"offloaded":true,"file_path":"/x"}]}`),
		"# still means the tool's schema: a child is not a descriptor")
	assert.True(t, admits(t, s, `{"offloaded":true,"file_path":"/x"}`))
}

func TestWidenOutputSchemaIsIdempotent(t *testing.T) {
	once, err := lro.WidenOutputSchema(json.RawMessage(typedSchema))
	require.NoError(t, err)
	twice, err := lro.WidenOutputSchema(once)
	require.NoError(t, err)
	assert.Equal(t, string(once), string(twice))
	var root struct{ AnyOf []json.RawMessage }
	require.NoError(t, json.Unmarshal(twice, &root))
	assert.Len(t, root.AnyOf, 2, "not nested")
}

// A schema of another type than object (the official SDK allows one) gets
// no root type, which would reject its values.
func TestWidenOutputSchemaOfArray(t *testing.T) {
	w, err := lro.WidenOutputSchema(json.RawMessage(`{"type":"array","items":{"type":"integer"}}`))
	require.NoError(t, err)
	s := compileSchema(t, w)
	assert.True(t, admits(t, s, `[1,2,3]`))
	assert.True(t, admits(t, s, `{"offloaded":true,"file_path":"/x"}`))
	assert.False(t, admits(t, s, `["a"]`))
}

func TestWidenOutputSchemaRejectsNonObjects(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, "empty"},
		{`  `, "empty"},
		{`true`, `not a JSON object: it starts with "t"`},
		{`null`, "not a JSON object"},
		{`[{"type":"object"}]`, `not a JSON object: it starts with "["`},
		{`"object"`, "not a JSON object"},
		{`{"type":`, "not valid JSON"},
		{`{"type":"object"} {}`, "data after its JSON object"},
		{`{"type":"object"}]`, "data after its JSON object"},
	} {
		_, err := lro.WidenOutputSchema(json.RawMessage(c.in))
		require.Error(t, err, "%q", c.in)
		assert.Contains(t, err.Error(), "lro: output schema ")
		assert.Contains(t, err.Error(), c.want, "%q", c.in)
	}
}

func TestListedOutputSchema(t *testing.T) {
	schema := json.RawMessage(typedSchema)
	o := newOffloader(t, nil,
		lro.WithTool("report", lro.ToolPolicy{Generic: true}),
		lro.WithTool("exact", lro.ToolPolicy{Generic: true, SkipOutputSchema: true}))

	w := o.Host().ListedOutputSchema("report", schema)
	assert.Contains(t, string(w), "lro offload descriptor", "a tool with a policy lists the widened schema")
	assert.True(t, &w[0] == &o.Host().ListedOutputSchema("report", schema)[0], "widened once, then cached")
	assert.True(t, &w[0] == &o.Host().ListedOutputSchema("recall_memories", schema)[0], "the cache is of the schema, whatever the tool")

	for _, tool := range []string{"exact", "unconfigured", lro.ExtractToolName} {
		assert.Equal(t, string(schema), string(o.Host().ListedOutputSchema(tool, schema)), tool)
	}
	assert.Nil(t, o.Host().ListedOutputSchema("report", nil), "no schema declared, none listed")
	bad := json.RawMessage(`[1]`)
	assert.Equal(t, string(bad), string(o.Host().ListedOutputSchema("report", bad)), "a schema that cannot be widened is listed as it is")

	off := newOffloader(t, func(c *lro.Config) { c.Enabled = lro.Bool(false) }, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	assert.Equal(t, string(schema), string(off.Host().ListedOutputSchema("report", schema)), "nothing is offloaded when disabled")
}
