package structq

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ask parses question, applies it to records (JSON lines decoded as the
// engine decodes them: numbers as float64) both ways Program allows,
// whole and as tuples, and returns the output encoded.
func ask(t *testing.T, question string, records ...string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(askJSON(t, question, records...)), &m))
	return m
}

// askJSON is ask's output as JSON text: Apply's, with the records it
// outputs whole put in items.
func askJSON(t *testing.T, question string, records ...string) string {
	t.Helper()
	s, err := Parse(args(t, question))
	require.NoError(t, err)
	rows := make([]any, len(records))
	for i, r := range records {
		require.NoError(t, json.Unmarshal([]byte(r), &rows[i]))
	}
	out, err := Apply(rows, s.Value(), nil)
	require.NoError(t, err)
	if s.Whole() {
		require.Len(t, out, 2)
		out[0].(map[string]any)["items"] = out[1]
	}
	return mustJSON(t, out[0])
}

func TestConditions(t *testing.T) {
	rows := []string{
		`{"id": 1, "amount": "1000.50", "status": "paid", "tags": ["Urgent", "vip"], "trace": {"parent": "a"}}`,
		`{"id": 2, "amount": "999", "status": "PAID", "tags": [], "trace": {}}`,
		`{"id": 3, "amount": 12.5, "status": null, "trace": "flat"}`,
		`{"id": 4, "amount": "abc", "ref": "12345678901234567891"}`,
		`[1, 2]`,
	}
	ids := func(question string) []any {
		t.Helper()
		q := `{"where": ` + question + `, "select": ["id"]}`
		var out []any
		for _, r := range ask(t, q, rows...)["items"].([]any) {
			out = append(out, r.(map[string]any)["id"])
		}
		return out
	}
	assert.Equal(t, []any{1.0}, ids(`[{"field": "amount", "op": "gt", "value": 999}]`), "numeric strings compare as numbers")
	assert.Equal(t, []any{1.0, 2.0}, ids(`[{"field": "amount", "op": "ge", "value": "999.0"}]`))
	assert.Equal(t, []any{3.0}, ids(`[{"field": "amount", "op": "eq", "value": "12.50"}]`))
	assert.Equal(t, []any{4.0}, ids(`[{"field": "amount", "op": "gt", "value": "a"}]`), "strings compare bytewise")
	assert.Equal(t, []any{1.0, 2.0}, ids(`[{"field": "status", "op": "contains", "value": "Pai"}]`), "contains ignores case")
	assert.Equal(t, []any{2.0}, ids(`[{"field": "status", "op": "matches", "value": "^P[A-Z]+$"}]`))
	assert.Equal(t, []any{1.0}, ids(`[{"field": "tags", "op": "contains", "value": "urg"}]`), "contains on an array: an element")
	assert.Equal(t, []any{1.0}, ids(`[{"field": "trace.parent", "op": "exists", "value": true}]`))
	assert.Equal(t, []any{2.0, 3.0, 4.0, nil}, ids(`[{"field": "trace.parent", "op": "exists", "value": false}]`), "a step through a string is missing")
	assert.Equal(t, []any{3.0}, ids(`[{"field": "status", "op": "exists", "value": false}, {"field": "amount", "op": "exists", "value": true}, {"field": "id", "op": "lt", "value": 4}]`))
	assert.Equal(t, []any{1.0, 3.0}, ids(`[{"field": "id", "op": "in", "value": ["1", 3, "x"]}]`))
	assert.Equal(t, []any{2.0, 3.0, 4.0, nil}, ids(`[{"field": "status", "op": "ne", "value": "paid"}]`))
	assert.Equal(t, []any{3.0, 4.0, nil}, ids(`[{"field": "status", "op": "eq", "value": null}]`), "missing equals null")
	assert.Equal(t, []any{4.0}, ids(`[{"field": "ref", "op": "gt", "value": "12345678901234567890"}]`), "long integers compare exactly")
	assert.Nil(t, ids(`[{"field": "ref", "op": "eq", "value": "12345678901234567890"}]`))
}

func TestRecordsSortLimitAndBudget(t *testing.T) {
	rows := []string{`{"id": 1, "ts": "2026-01-02"}`, `{"id": 2, "ts": "2026-01-03"}`, `{"id": 3}`, `{"id": 4, "ts": "2026-01-03"}`, `{"id": 5, "ts": "2026-01-01"}`}
	out := ask(t, `{"sort": {"field": "ts", "desc": true}, "limit": 3}`, rows...)
	assert.Equal(t, 5.0, out["matched"])
	assert.Equal(t, 3.0, out["total"])
	var ids []any
	for _, r := range out["items"].([]any) {
		ids = append(ids, r.(map[string]any)["id"])
	}
	assert.Equal(t, []any{2.0, 4.0, 1.0}, ids, "latest first, ties in file order")

	out = ask(t, `{"sort": {"field": "ts"}, "select": ["id"]}`, rows...)
	assert.Equal(t, []any{map[string]any{"id": 3.0}, map[string]any{"id": 5.0}}, out["items"].([]any)[:2], "missing sorts first")

	s, err := Parse(args(t, `{"select": ["id"]}`))
	require.NoError(t, err)
	s.Budget = 20
	records := []any{map[string]any{"id": 1.0}, map[string]any{"id": 2.0}, map[string]any{"id": 3.0}, map[string]any{"id": 4.0}}
	res, err := Apply(records, s.Value(), nil)
	require.NoError(t, err)
	assert.Len(t, res[0].(map[string]any)["items"], 2, "items stop at the budget: {\"id\":1} is 8 bytes and a comma")
	assert.Equal(t, 4, res[0].(map[string]any)["total"])
}

func TestAggregates(t *testing.T) {
	var rows []string
	// 0.07 a thousand times: float addition gives 70.00000000000089.
	for i := range 1000 {
		rows = append(rows, `{"amount": "0.07", "cust": "c`+string(rune('a'+i%3))+`", "n": 1}`)
	}
	rows = append(rows, `{"amount": null, "cust": "cd"}`, `{"amount": "x", "cust": "cd"}`)
	value := func(q string) any { t.Helper(); return ask(t, q, rows...)["value"] }
	assert.Equal(t, `{"matched":1002,"value":70.00}`, askJSON(t, `{"aggregate": {"op": "sum", "field": "amount"}}`, rows...), "exact, with the input's decimals")
	assert.Equal(t, 0.07, value(`{"aggregate": {"op": "avg", "field": "amount"}}`))
	assert.Equal(t, 1002.0, value(`{"aggregate": {"op": "count"}}`))
	assert.Equal(t, 4.0, value(`{"aggregate": {"op": "distinct", "field": "cust"}}`))
	assert.Equal(t, 2.0, value(`{"aggregate": {"op": "distinct", "field": "amount"}}`), `"0.07" and "x"; null is no value`)
	assert.Equal(t, "0.07", value(`{"aggregate": {"op": "min", "field": "amount"}}`), "as the record has it")
	assert.Equal(t, "x", value(`{"aggregate": {"op": "max", "field": "amount"}}`), "strings after numbers")
	assert.Nil(t, value(`{"where": [{"field": "cust", "op": "eq", "value": "cd"}], "aggregate": {"op": "sum", "field": "n"}}`))

	out := ask(t, `{"aggregate": {"op": "sum", "field": "amount"}, "group_by": "cust", "limit": 3}`, rows...)
	assert.Equal(t, 1002.0, out["matched"])
	assert.Equal(t, 4.0, out["groups"])
	var got []string
	for _, g := range out["items"].([]any) {
		g := g.(map[string]any)
		got = append(got, mustJSON(t, g["key"])+"="+mustJSON(t, g["value"])+"/"+mustJSON(t, g["count"]))
	}
	assert.Equal(t, []string{`"ca"=23.38/334`, `"cb"=23.31/333`, `"cc"=23.31/333`}, got, "by value desc, then key")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestExactSums(t *testing.T) {
	for _, c := range []struct {
		values []any
		want   string
	}{
		{[]any{"0.1", "0.2"}, "0.3"},
		{[]any{"0.10", 0.2}, "0.30"},
		{[]any{"-5", "2.25"}, "-2.75"},
		{[]any{"999999999999999999", "1"}, "1000000000000000000"},
		{[]any{"1e-3", "2"}, "2.001"},
		{[]any{1e21, "1"}, "1000000000000000000001"},
		{[]any{"-0.5", "0.25"}, "-0.25"},
	} {
		var s decimalSum
		for _, v := range c.values {
			n, ok := toNumber(v)
			require.True(t, ok, v)
			s.add(n)
		}
		assert.Equal(t, json.Number(c.want), s.value(), "%v", c.values)
	}
}

func TestCanonicalDecimal(t *testing.T) {
	for in, want := range map[string]string{"1.50": "15e-1", "15e-1": "15e-1", "0.15e1": "15e-1", "0": "0", "-0.0": "0", "100": "1e2", "007": "7e0", "-2.5E+3": "-25e2"} {
		assert.Equal(t, want, canonicalDecimal(in), in)
	}
	assert.Equal(t, key("1.50"), key(1.5))
	assert.NotEqual(t, key("1.5"), key("1.5x"))
}
