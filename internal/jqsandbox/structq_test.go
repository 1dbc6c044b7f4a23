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
	p := q.CacheProjection(Slurp)
	recs, err := DecodeProjected(strings.NewReader(sampleJSONL), testLimits(), p)
	require.NoError(t, err)
	cached, err := q.RunRecords(context.Background(), recs, Slurp, vars, testLimits())
	require.NoError(t, err)
	assert.Equal(t, strs(res.Values), strs(cached.Values), "the cached records answer alike")
	return strings.Join(strs(res.Values), "\n"), p
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

	// Records output whole: chosen by the title alone, printed from
	// their lines, in the file's key order.
	out, p = askSample(t, `{"where": [{"field": "title", "op": "matches", "value": "^(Deploy|Cache)"}], "sort": {"field": "size"}}`)
	assert.Equal(t, "{size:*,title:*}+lines", p.String())
	assert.Equal(t, `{"groups":0,"matched":2,"total":2}`+"\n"+
		`[{"id":"m-004","title":"Deploy checklist","namespace":"_procedural/ops","tags":[],"created":"2023-11-02T09:00:00Z","provenance":{"source":"runbook","confidence":0.5},"size":0},`+
		`{"id":"m-001","title":"Cache invalidation strategy","namespace":"_semantic/architecture","tags":["performance","caching"],"created":"2024-05-01T10:00:00Z","provenance":{"source":"chat","confidence":0.85},"size":1200}]`, out)
}
