package jqsandbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcplro/lro/internal/structq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// askSample compiles the structured question as lro_extract does and
// runs it over sampleJSONL in slurp mode, from the file and from the
// records a cache keeps for it.
func askSample(t *testing.T, question string) (string, Projection) {
	t.Helper()
	var args map[string]any
	require.NoError(t, json.Unmarshal([]byte(question), &args))
	s, err := structq.Parse(args)
	require.NoError(t, err)
	q, err := CompileTrusted(s.Program(), []string{structq.Var})
	require.NoError(t, err)
	vars := []any{s.Value()}
	res, err := q.Run(context.Background(), strings.NewReader(sampleJSONL), Slurp, vars, testLimits())
	require.NoError(t, err)
	require.Len(t, res.Values, 1)
	p := q.CacheProjection(Slurp)
	recs, err := DecodeProjected(strings.NewReader(sampleJSONL), testLimits(), p)
	require.NoError(t, err)
	cached, err := q.RunRecords(context.Background(), recs, Slurp, vars, testLimits())
	require.NoError(t, err)
	assert.Equal(t, strs(res.Values), strs(cached.Values), "the cached records answer alike")
	return string(res.Values[0]), p
}

func TestStructuredQuestionsRunAsTrustedPrograms(t *testing.T) {
	out, p := askSample(t, `{"where": [{"field": "provenance.confidence", "op": "gt", "value": "0.8"}], "select": ["id", "provenance.source"], "sort": {"field": "created", "desc": true}}`)
	assert.Equal(t, `{"groups":0,"items":[{"id":"m-005","provenance.source":"ticket"},{"id":"m-001","provenance.source":"chat"},{"id":"m-002","provenance.source":"doc"}],"matched":3,"total":3}`, out)
	assert.False(t, p.Whole(), "only the fields named are decoded")
	assert.Equal(t, "{created:*,id:*,provenance:{confidence:*,source:*}}", p.String())

	out, p = askSample(t, `{"aggregate": {"op": "sum", "field": "size"}, "group_by": "namespace", "limit": 2}`)
	assert.Equal(t, `{"groups":6,"items":[{"count":2,"key":"_semantic/security","value":4626},{"count":2,"key":"_semantic/architecture","value":1840}],"matched":8,"total":2}`, out)
	assert.Equal(t, "{namespace:*,size:*}", p.String())

	out, _ = askSample(t, `{"where": [{"field": "tags", "op": "contains", "value": "SECUR"}], "aggregate": {"op": "count"}}`)
	assert.Equal(t, `{"matched":3,"value":3}`, out)

	out, p = askSample(t, `{"where": [{"field": "title", "op": "matches", "value": "^Deploy"}]}`)
	assert.True(t, p.Whole(), "records are output whole")
	assert.Contains(t, out, `"items":[{"id":"m-004","title":"Deploy checklist","namespace":"_procedural/ops",`, "in the file's key order")
}
