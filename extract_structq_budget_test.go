package lro_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcplro/lro/internal/structq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// structuredSchemaBudget bounds, in tokens as the library estimates them,
// what lro_extract's input schema spends on the arguments of a question
// asked without jq (where, select, sort, limit, aggregate, group_by),
// and schemaBudget the whole schema.
const (
	structuredSchemaBudget = 320
	schemaBudget           = 680
)

// TestExtractSchemaBudget: the input schema is JSON, documents every
// argument of a question and every operator, and stays within its
// budget. Run with -v for the sizes.
func TestExtractSchemaBudget(t *testing.T) {
	o := newOffloader(t, nil)
	def := o.Host().ExtractToolDefinition()
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(def.InputSchema, &schema))
	structured := 0
	for _, name := range structq.Names {
		p, ok := schema.Properties[name]
		require.True(t, ok, name)
		structured += o.EstimateTokens(p)
	}
	for _, op := range append(slices.Clone(structq.Ops), structq.Aggregates...) {
		assert.Contains(t, string(def.InputSchema), `"`+op+`"`)
	}
	whole := o.EstimateTokens(def.InputSchema)
	t.Logf("input schema: %d tokens, of which the question's arguments %d; description %d", whole, structured, o.EstimateTokens([]byte(def.Description)))
	assert.LessOrEqual(t, structured, structuredSchemaBudget)
	assert.LessOrEqual(t, whole, schemaBudget)
}
