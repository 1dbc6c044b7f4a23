package structq

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadShape(t *testing.T) {
	lines := `{"id":1,"trace":{"id":"t","parent":null},"tags":["a"],"k\u00e9y":2}` + "\n" +
		`{"id":2,"trace":"flat","extra":{"deep":{"er":true}}}` + "\n"
	sh := ReadShape(strings.NewReader(lines))
	var paths []string
	for _, f := range sh.Fields {
		paths = append(paths, f.Path+":"+f.Kind)
	}
	assert.Equal(t, []string{"id:number", "trace:object", "trace.id:string", "trace.parent:null", "tags:array", "kéy:number", "extra:object", "extra.deep:object", "extra.deep.er:boolean"}, paths,
		"each field before its own, in the order met, keys unescaped, arrays not entered")
	assert.Equal(t, 2, sh.Records)
	assert.False(t, sh.Partial)
	assert.Empty(t, sh.Kinds)

	sh = ReadShape(strings.NewReader("\"a line\"\n12\n[1]\n"))
	assert.Empty(t, sh.Fields)
	assert.Equal(t, map[string]int{"string": 1, "number": 1, "array": 1}, sh.Kinds)
	assert.Equal(t, "arrays, strings and numbers", sh.kinds())

	// Cut short by the caller's bound: the fields before the cut, and
	// never a panic, wherever the cut falls.
	for n := range len(lines) {
		sh = ReadShape(strings.NewReader(lines[:n]))
		if n > 10 {
			assert.Equal(t, "id", sh.Fields[0].Path, n)
		}
	}
	assert.True(t, ReadShape(strings.NewReader(lines[:20])).Partial)
}

func TestClosestField(t *testing.T) {
	sh := ReadShape(strings.NewReader(`{"status":1,"amount":2,"customer_id":3,"order":{"created_at":4},"Name":5}`))
	for f, want := range map[string]string{
		"stauts":     "status", // a swap
		"staus":      "status",
		"STATUS":     "status",
		"created_at": "order.created_at", // the same key, deeper
		"customerid": "customer_id",
		"name":       "Name",
		"count":      "", // not amount: two edits in five letters
		"xyz":        "",
	} {
		assert.Equal(t, want, sh.closest(f), f)
	}
	assert.Equal(t, 1, edits("stauts", "status"))
	assert.Equal(t, 3, edits("kitten", "sitting"))
	assert.Equal(t, 0, edits("", ""))
	assert.Equal(t, 4, edits("", "abcd"))
}

func TestFieldsErrorMessages(t *testing.T) {
	s, err := Parse(args(t, `{"where": [{"field": "x", "op": "eq", "value": 1}], "select": ["y"]}`))
	require.NoError(t, err)
	_, err = s.Answer(raw(`{"matched":0,"total":0,"groups":0,"items":[],"missing":["y","x"],"records":4}`), 1000, bytes4)
	var fe *FieldsError
	require.True(t, errors.As(err, &fe), "%v", err)
	assert.Equal(t, []string{"x", "y"}, fe.Missing, "in the arguments' order")
	assert.Equal(t, `no record has the fields "x" (where[0].field) and "y" (select[0]) among the 4 records; ask with the fields of the descriptor's line_schema.`, err.Error())

	fe.Shape = ReadShape(strings.NewReader("\"a line\"\n\"another\"\n"))
	assert.Equal(t, `no record has the fields "x" (where[0].field) and "y" (select[0]) among the 4 records; the records are strings, not objects: a field names nothing in them; use grep, or a query over each record (.).`, err.Error())

	var many strings.Builder
	many.WriteString("{")
	for i := range 50 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`"f` + strings.Repeat("x", i) + `":1`)
	}
	many.WriteString(`,"rows":[{"x":1}]}` + "\n" + `"text"`)
	fe.Shape = ReadShape(strings.NewReader(many.String()))
	msg := err.Error()
	assert.Contains(t, msg, ", and 11 more; some records are strings, not objects.")
	assert.NotContains(t, msg, "(array)", "rows is past the 40 listed")
}

func TestTypeNotes(t *testing.T) {
	rows := []string{`{"n": "N/A", "s": "x", "o": {"a": 1}, "b": true}`, `{"n": null, "s": "y", "o": {}, "b": false}`, `{"id": 3}`}
	note := func(q string) string {
		t.Helper()
		s, err := Parse(args(t, q))
		require.NoError(t, err)
		out := askJSON(t, q, rows...)
		text, err := s.Answer(raw(out), 1000, bytes4)
		require.NoError(t, err)
		_, notes, _ := strings.Cut(text, "\n")
		return notes
	}
	assert.Equal(t, `[lro_extract: where[0] (n gt 999) holds for no record: it compares a number, and no record's n is a number or a string that reads as one (e.g. "N/A")]`+"\n",
		note(`{"where": [{"field": "n", "op": "gt", "value": 999}], "aggregate": {"op": "count"}}`))
	assert.Contains(t, note(`{"where": [{"field": "o", "op": "contains", "value": "a"}], "aggregate": {"op": "count"}}`),
		`where[0] (o contains "a") holds for no record: it compares text, and no record's o is a string, a number or an array of them (e.g. {"a":1})`)
	assert.Contains(t, note(`{"where": [{"field": "s", "op": "ne", "value": 3}], "aggregate": {"op": "count"}}`), "holds for every record")
	assert.Contains(t, note(`{"where": [{"field": "b", "op": "eq", "value": "true"}], "aggregate": {"op": "count"}}`), `no record's b is a string (e.g. true)`)
	assert.Empty(t, note(`{"where": [{"field": "s", "op": "gt", "value": "a"}, {"field": "n", "op": "exists", "value": true}], "aggregate": {"op": "count"}}`))
	assert.Empty(t, note(`{"where": [{"field": "n", "op": "eq", "value": "N/A"}], "aggregate": {"op": "count"}}`))
	assert.Equal(t, `[lro_extract: none of the 2 matched records has a value at o.a (other records do), so the max is null]`+"\n",
		note(`{"where": [{"field": "o.a", "op": "exists", "value": false}], "aggregate": {"op": "max", "field": "o.a"}}`))
	assert.Equal(t, `[lro_extract: none of the 3 matched records has a number at s, nor a string that reads as one (e.g. "x"), so each group's sum is null]`+"\n",
		note(`{"group_by": "id", "aggregate": {"op": "sum", "field": "s"}}`))
}

func TestParseRefusesOrderingBooleans(t *testing.T) {
	_, err := Parse(args(t, `{"where": [{"field": "b", "op": "gt", "value": true}]}`))
	assert.EqualError(t, err, "where[0].value must be a number or a string for gt (nothing is less or greater than true or false), got true")
	_, err = Parse(args(t, `{"where": [{"field": "b", "op": "eq", "value": true}]}`))
	assert.NoError(t, err)
}

func TestCutValue(t *testing.T) {
	for _, c := range []struct {
		v    any
		max  int
		want any
		cut  bool
	}{
		{"short", 20, "short", false},
		{strings.Repeat("a", 30), 20, "aaaaaaaaa" + CutMarker, true},
		{strings.Repeat("é", 30), 20, "éééé" + CutMarker, true},
		{strings.Repeat(`"`, 30), 20, `""""` + CutMarker, true},
		{strings.Repeat("<", 30), 30, "<<<" + CutMarker, true}, // \u003c each
		{[]any{"abc", "def", "ghi"}, 19, []any{"abc", "def", "ghi"}, false},
		{[]any{"abc", "def", "ghi"}, 18, `["abc` + CutMarker, true}, // its quotes escaped: 2 bytes each
		{map[string]any{"k": strings.Repeat("v", 40)}, 22, `{"k":"vv` + CutMarker, true},
		{12.5, 2, 12.5, false},
		{nil, 1, nil, false},
	} {
		got, cut := cutValue(c.v, c.max)
		assert.Equal(t, c.want, got, "%v", c.v)
		assert.Equal(t, c.cut, cut, "%v", c.v)
		if cut {
			assert.LessOrEqual(t, len(jsonText(got)), c.max, "%s", jsonText(got))
		}
	}
}

func TestAnswerOfNothingIsNoInternalError(t *testing.T) {
	s, err := Parse(args(t, `{"aggregate": {"op": "max", "field": "f"}}`))
	require.NoError(t, err)
	_, err = s.Answer(nil, 1000, bytes4)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "internal")
	assert.Contains(t, err.Error(), "narrow where")

	// A single value over the budget is cut to fit it.
	long, _ := json.Marshal(strings.Repeat("x", 10000))
	text, err := s.Answer(raw(`{"matched":3,"value":`+string(long)+`}`), 200, bytes4)
	require.NoError(t, err)
	assert.LessOrEqual(t, bytes4([]byte(text)), 200)
	assert.Greater(t, bytes4([]byte(text)), 180, "as much as fits")
	assert.Contains(t, text, `xx`+CutMarker+`"}`+"\n[lro_extract: long values are cut")
}
