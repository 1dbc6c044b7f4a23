package structq

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bytes4 estimates tokens as bytes/4, as the library's default does.
func bytes4(b []byte) int { return (len(b) + 3) / 4 }

func TestAnswerOrdersFieldsAndSaysWhatItCut(t *testing.T) {
	s, err := Parse(args(t, `{"select": ["name", "id"]}`))
	require.NoError(t, err)
	out := `{"groups":0,"items":[{"id":1,"name":"a"},{"id":2,"name":"b"},{"id":3,"name":"c"}],"matched":7,"total":5}`
	got, err := s.Answer(raw(out), 1000, bytes4)
	require.NoError(t, err)
	assert.Equal(t, `{"matched":7,"records":[{"name":"a","id":1},{"name":"b","id":2},{"name":"c","id":3}]}`+"\n"+
		"[lro_extract: showing 3 of 5 records (7 records matched), as many as fit; lower limit, narrow where, or select fewer fields to see the rest]\n", got)

	got, err = s.Answer(raw(out), 12, bytes4)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(got, `{"matched":7,"records":[{"name":"a","id":1}]}`+"\n[lro_extract: showing 1 of 5 records"), got)

	g, err := Parse(args(t, `{"aggregate": {"op": "sum", "field": "x"}, "group_by": "k", "limit": 1}`))
	require.NoError(t, err)
	got, err = g.Answer(raw(`{"groups":4,"items":[{"count":2,"key":"b","value":7.50}],"matched":9,"total":1}`), 1000, bytes4)
	require.NoError(t, err)
	assert.Equal(t, `{"matched":9,"groups":[{"key":"b","value":7.50,"count":2}]}`+"\n[lro_extract: the first 1 of 4 groups, as limit asked]\n", got)

	a, err := Parse(args(t, `{"aggregate": {"op": "avg", "field": "x"}}`))
	require.NoError(t, err)
	got, err = a.Answer(raw(`{"matched":0,"value":null}`), 1000, bytes4)
	require.NoError(t, err)
	assert.Equal(t, `{"matched":0,"value":null}`+"\n", got)

	_, err = a.Answer(raw(`nope`), 1000, bytes4)
	assert.ErrorContains(t, err, "malformed")

	w, err := Parse(args(t, `{"limit": 3}`))
	require.NoError(t, err)
	got, err = w.Answer(raw(`{"groups":0,"matched":9,"total":3}`, `[{"b":1,"a":2},{"b":3}]`), 1000, bytes4)
	require.NoError(t, err)
	assert.Equal(t, `{"matched":9,"records":[{"b":1,"a":2},{"b":3}]}`+"\n"+
		"[lro_extract: showing 2 of 3 records (9 records matched), as many as fit; lower limit, narrow where, or select fewer fields to see the rest]\n", got,
		"whole records as the engine printed them, as many as its output held")
	got, err = w.Answer(raw(`{"groups":0,"matched":9,"total":3}`), 1000, bytes4)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(got, `{"matched":9,"records":[]}`+"\n[lro_extract: showing 0 of 3 records"), got)
}

func raw(values ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(values))
	for i, v := range values {
		out[i] = json.RawMessage(v)
	}
	return out
}
