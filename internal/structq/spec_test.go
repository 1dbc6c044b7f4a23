package structq

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// args decodes a call's arguments as an SDK does.
func args(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}

func TestParseRejectsMalformedArgumentsNamingThem(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`{"where": {"field": "a", "op": "eq", "value": 1}}`, "where must be an array"},
		{`{"where": [{"field": "a", "op": "like", "value": 1}]}`, "where[0].op must be one of eq ne lt le gt ge contains matches in exists"},
		{`{"where": [{"field": 7, "op": "eq", "value": 1}]}`, "where[0].field must be a string"},
		{`{"where": [{"field": "a..b", "op": "eq", "value": 1}]}`, "where[0].field must be a dotted field path"},
		{`{"where": [{"field": "a", "op": "eq", "value": 1}, "b"]}`, "where[1] must be an object"},
		{`{"where": [{"field": "a", "op": "eq", "value": 1, "x": 2}]}`, `where[0] has no key "x"`},
		{`{"where": [{"field": "a", "op": "in", "value": 1}]}`, "where[0].value must be an array of 1 to 256 values for in"},
		{`{"where": [{"field": "a", "op": "exists", "value": "yes"}]}`, "where[0].value must be true or false for exists"},
		{`{"where": [{"field": "a", "op": "contains", "value": 3}]}`, "where[0].value must be a non-empty string for contains"},
		{`{"where": [{"field": "a", "op": "matches", "value": "("}]}`, "where[0].value: invalid pattern"},
		{`{"where": [{"field": "a", "op": "matches", "value": "a{1000}"}]}`, "where[0].value: the pattern is too complex"},
		{`{"where": [{"field": "a", "op": "lt"}]}`, "where[0].value is required for lt"},
		{`{"where": [{"field": "a", "op": "eq", "value": {"b": 1}}]}`, "where[0].value must be a string, a number, true, false or null"},
		{`{"select": "a"}`, "select must be an array"},
		{`{"select": ["a", 1]}`, "select[1] must be a string"},
		{`{"sort": "a"}`, "sort must be an object"},
		{`{"sort": {"field": "a", "desc": "yes"}}`, "sort.desc must be true or false"},
		{`{"sort": {"desc": true}}`, "sort.field must be a string"},
		{`{"limit": 2.5}`, "limit must be a whole number"},
		{`{"limit": 0}`, "limit must be a whole number"},
		{`{"aggregate": {"op": "median", "field": "a"}}`, "aggregate.op must be one of count sum avg min max distinct"},
		{`{"aggregate": {"op": "sum"}}`, "aggregate.field must be a string"},
		{`{"aggregate": {"op": "count", "field": "a"}}`, "aggregate.field goes with sum"},
		{`{"aggregate": "count"}`, "aggregate must be an object"},
		{`{"group_by": "a"}`, "group_by goes with aggregate"},
		{`{"group_by": ["a"], "aggregate": {"op": "count"}}`, "group_by must be a string"},
		{`{"aggregate": {"op": "count"}, "select": ["a"]}`, "select goes with records"},
		{`{"aggregate": {"op": "count"}, "sort": {"field": "a"}}`, "sort goes with records"},
		{`{"aggregate": {"op": "count"}, "limit": 3}`, "limit goes with records or group_by"},
		{`{"where": [` + strings.Repeat(`{"field": "a", "op": "in", "value": ["`+strings.Repeat("x", 4000)+`", "`+strings.Repeat("y", 4000)+`"]},`, 9) + `{"field": "a", "op": "exists", "value": true}]}`, "where's values take more than 65536 bytes in all"},
	} {
		_, err := Parse(args(t, c.args))
		if assert.Error(t, err, c.args) {
			assert.Contains(t, err.Error(), c.want, c.args)
		}
	}
}

func TestParseAcceptsEveryForm(t *testing.T) {
	for _, a := range []string{
		`{"where": [{"field": "status", "op": "eq", "value": "paid"}, {"field": "amount", "op": "gt", "value": "999"}]}`,
		`{"where": [{"field": "trace.parent", "op": "exists", "value": false}], "select": ["id", "trace.id"], "sort": {"field": "ts", "desc": true}, "limit": 5}`,
		`{"where": [{"field": "tags", "op": "in", "value": ["a", 1, null, true]}]}`,
		`{"aggregate": {"op": "count"}}`,
		`{"aggregate": {"op": "sum", "field": "amount"}, "group_by": "customer", "limit": 5}`,
	} {
		s, err := Parse(args(t, a))
		require.NoError(t, err, a)
		// The form sent to the engine reads back as the same question.
		back, err := Parse(s.Value())
		require.NoError(t, err, a)
		assert.Equal(t, s.Value(), back.Value(), a)
		assert.True(t, Present(args(t, a)))
	}
	assert.False(t, Present(map[string]any{"query": ".", "where": nil}))
}

func TestProgramNamesTheFieldsItReads(t *testing.T) {
	s, err := Parse(args(t, `{"where": [{"field": "trace.parent", "op": "exists", "value": false}, {"field": "level", "op": "eq", "value": "error"}], "select": ["id", "level"]}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"id", "level", "trace.parent"}, s.Paths())
	assert.Equal(t, `_lro_structq($q;["id","level","trace.parent"])`, s.Program())

	s, err = Parse(args(t, `{"where": [{"field": "a\"b", "op": "eq", "value": 1}], "sort": {"field": "c"}}`))
	require.NoError(t, err)
	assert.True(t, s.Whole(), "records output whole")
	assert.Equal(t, `_lro_structq_records($q;["a\"b","c"])`, s.Program(), "a key is a JSON string")

	s, err = Parse(args(t, `{"aggregate": {"op": "count"}}`))
	require.NoError(t, err)
	assert.Equal(t, `_lro_structq($q;[])`, s.Program())
}
