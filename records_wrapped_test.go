package lro_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// order is one row of the generated orders table that the SQL-server
// tests query.
type order struct {
	ID       int    `json:"id"`
	Status   string `json:"status"`
	Amount   string `json:"amount"` // numeric, as PostgreSQL drivers send it
	Customer string `json:"customer"`
}

func orders(n int) []order {
	rows := make([]order, n)
	for i := range rows {
		rows[i] = order{ID: i + 1, Status: []string{"delivered", "pending", "cancelled", "delivered"}[i%4],
			Amount: fmt.Sprintf("%d.%02d", (i*37)%1000, (i*13)%100), Customer: fmt.Sprintf("c%03d", i%250)}
	}
	return rows
}

// dbhubAnswer is the shape of @bytebase/dbhub's execute_sql answer: the
// rows of each statement inside an element of data.statements.
func dbhubAnswer(t *testing.T, statements ...[]order) string {
	t.Helper()
	var sts []any
	for i, rows := range statements {
		sts = append(sts, map[string]any{"sql": fmt.Sprintf("SELECT * FROM orders -- %d", i), "rows": rows, "count": len(rows)})
	}
	return mustJSON(t, map[string]any{"success": true, "data": map[string]any{"statements": sts}})
}

// TestRowsInsideStatements is issue 38.1: dbhub's rows, inside an element
// of data.statements, are the records (they were one record of 50,000
// rows, section data.statements, its schema {sql, rows, count}), and the
// recipes answer on them as SQL does on the table.
func TestRowsInsideStatements(t *testing.T) {
	n := 5000
	if testenv.Full() {
		n = 50_000 // the reported case
	}
	rows := orders(n)
	o := genericOffloader(t)
	res := serve(t, o, "execute_sql", nil, host.Result{Content: []host.Content{host.TextContent(dbhubAnswer(t, rows))}})
	d, text := descriptorIn(t, res, 0)
	assert.Equal(t, "data.statements[0].rows", d.Section)
	assert.Equal(t, n, d.Summary.Count)
	assert.Empty(t, d.Sections)
	var schema struct{ Properties map[string]any }
	require.NoError(t, json.Unmarshal(d.LineSchema, &schema))
	assert.ElementsMatch(t, []string{"id", "status", "amount", "customer"}, slices.Collect(maps.Keys(schema.Properties)), "the columns")
	assert.Equal(t, json.RawMessage(`"SELECT * FROM orders -- 0"`), d.Summary.Extra["data.statements[0].sql"], "the statement's small fields stay in the summary")
	assert.NotContains(t, d.Summary.Extra, "data.statements[0].count", "the server's count is the summary's")
	assert.Less(t, len(text), 8<<10)

	_, lines := fileRecords(t, d.FilePath)
	require.Len(t, lines, n)
	assert.JSONEq(t, mustJSON(t, rows[41]), string(lines[41]), "a row a line")

	// The recipes, run by the real jq as the descriptor writes them,
	// against the same computation over the rows in Go.
	delivered, amount := 0, new(big.Rat)
	perStatus := map[string]int{}
	for _, r := range rows {
		perStatus[r.Status]++
		if r.Status == "delivered" {
			delivered++
			a, _ := new(big.Rat).SetString(r.Amount)
			amount.Add(amount, a)
		}
	}
	ran := 0
	for _, r := range d.JQRecipes {
		switch r.Description {
		case "Show the first 10 records":
			out := runShell(t, r.Command, false)
			require.Len(t, out.values, 1)
			assert.JSONEq(t, mustJSON(t, rows[:10]), mustJSON(t, out.values[0]))
			assert.Less(t, len(lro.RunCut(t, r.Command)), 2<<10, "ten rows, not a cut line of every row")
		case "Filter by id = VALUE":
			require.Contains(t, r.Command, `"1"`)
			out := runShell(t, r.Command, false)
			require.Len(t, out.values, 1, "SELECT * WHERE id = 1")
			assert.JSONEq(t, mustJSON(t, rows[0]), mustJSON(t, out.values[0]))
		case "Show only id, status, amount":
			out := runShell(t, r.Command, false)
			require.Len(t, out.values, n, "SELECT id, status, amount")
			assert.JSONEq(t, fmt.Sprintf(`{"id":%d,"status":%q,"amount":%q}`, rows[n-1].ID, rows[n-1].Status, rows[n-1].Amount), mustJSON(t, out.values[n-1]))
		case "Count the records":
			assert.Equal(t, []any{float64(n)}, runShell(t, r.Command, false).values)
		case "Count by status":
			out := runShell(t, r.Command, false)
			got := map[string]int{}
			for _, g := range out.values[0].([]any) {
				m := g.(map[string]any)
				got[m["status"].(string)] = int(m["count"].(float64))
			}
			assert.Equal(t, perStatus, got, "SELECT status, count(*) GROUP BY status")
		case "Filter by status = VALUE":
			require.Contains(t, r.Command, `"delivered"`)
			out := runShell(t, r.Command, false)
			assert.Len(t, out.values, delivered, "SELECT count(*) WHERE status = 'delivered'")
			sum := new(big.Rat)
			for _, v := range out.values {
				a, _ := new(big.Rat).SetString(v.(map[string]any)["amount"].(string))
				sum.Add(sum, a)
			}
			assert.Equal(t, amount.FloatString(2), sum.FloatString(2), "SELECT sum(amount) WHERE status = 'delivered'")
		default:
			continue
		}
		ran++
	}
	assert.Equal(t, 6, ran, "every recipe compared was in the descriptor: %s", text)
}

// Several statements are several sections, one file each, the largest
// first; a statement without rows stays in the summary.
func TestStatementsAreSections(t *testing.T) {
	o := genericOffloader(t)
	body := dbhubAnswer(t, orders(300), nil, orders(900))
	d, _ := descriptorIn(t, serve(t, o, "execute_sql", nil, host.Result{Content: []host.Content{host.TextContent(body)}}), 0)
	assert.Equal(t, "data.statements[2].rows", d.Section)
	assert.Equal(t, 900, d.Summary.Count)
	require.Len(t, d.Sections, 1)
	assert.Equal(t, "data.statements[0].rows", d.Sections[0].Section)
	assert.Equal(t, 300, d.Sections[0].Count)
	// The statement without rows stays in the summary, or, where the
	// summary's extra is past its budget (issue 41: 128 bytes), is counted
	// among the fields it leaves out, never silently.
	if st, ok := d.Summary.Extra["data.statements[1]"]; ok {
		assert.Contains(t, string(st), `"count":0`)
	} else {
		assert.Contains(t, string(d.Summary.Extra["…[cut]"]), "more fields left out", "extra: %s", mustJSON(t, d.Summary.Extra))
	}
	_, lines := fileRecords(t, d.Sections[0].FilePath)
	require.Len(t, lines, 300)
	assert.JSONEq(t, mustJSON(t, orders(300)[299]), string(lines[299]))

	// A root array of statements is searched the same way.
	body = mustJSON(t, []any{map[string]any{"sql": "SELECT 1", "rows": orders(400)}})
	d, _ = descriptorIn(t, serve(t, o, "execute_sql", nil, host.Result{Content: []host.Content{host.TextContent(body)}}), 0)
	assert.Equal(t, "[0].rows", d.Section)
	assert.Equal(t, 400, d.Summary.Count)
}

// A fallback rebuilds the answer in its shape, the rows cut.
func TestStatementsFallBackInShape(t *testing.T) {
	mem := lrotest.NewMemFS("/lro")
	mem.FailCreate(syscall.EACCES)
	o := genericOffloader(t, lro.WithFS(mem))
	res := serve(t, o, "execute_sql", nil, host.Result{Content: []host.Content{host.TextContent(dbhubAnswer(t, orders(2000)))}})
	require.Len(t, res.Content, 2)
	var cut struct {
		Success bool
		Data    struct {
			Statements []struct {
				SQL   string
				Rows  []order
				Count int
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &cut), "%.300s", res.Content[0].Text)
	assert.True(t, cut.Success)
	require.Len(t, cut.Data.Statements, 1)
	st := cut.Data.Statements[0]
	assert.Equal(t, 2000, st.Count)
	assert.Equal(t, "SELECT * FROM orders -- 0", st.SQL)
	require.NotEmpty(t, st.Rows)
	assert.Less(t, len(st.Rows), 2000)
	assert.Equal(t, orders(2000)[:len(st.Rows)], st.Rows, "whole rows, from the first")
}

// Ordinary arrays stay records: more elements than a few, or few whose
// large members are not arrays of records.
func TestRecordsWithArraysStayRecords(t *testing.T) {
	o := genericOffloader(t)
	var many []any
	for i := range 40 {
		many = append(many, map[string]any{"id": i, "lines": orders(20)})
	}
	d, _ := descriptorIn(t, serve(t, o, "list_orders", nil, host.Result{Content: []host.Content{host.TextContent(mustJSON(t, many))}}), 0)
	assert.Equal(t, 40, d.Summary.Count, "forty records, each with its own lines")
	assert.Empty(t, d.Section)

	var docs []any
	for i := range 5 {
		docs = append(docs, map[string]any{"id": i, "body": strings.Repeat("text of a document ", 2000), "tags": []string{"a", "b"}})
	}
	d, _ = descriptorIn(t, serve(t, o, "docs", nil, host.Result{Content: []host.Content{host.TextContent(mustJSON(t, map[string]any{"docs": docs}))}}), 0)
	assert.Equal(t, "docs", d.Section)
	assert.Equal(t, 5, d.Summary.Count, "five documents, their bodies strings")
}

// TestRecordsBelowThreeLevels: objects are searched at any depth (the
// search stopped at three, and made the fourth level's members records).
func TestRecordsBelowThreeLevels(t *testing.T) {
	o := genericOffloader(t)
	body := mustJSON(t, map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": map[string]any{"items": tickets(300), "n": 300}}}}})
	d, _ := descriptorIn(t, serve(t, o, "deep", nil, host.Result{Content: []host.Content{host.TextContent(body)}}), 0)
	assert.Equal(t, "a.b.c.d.items", d.Section)
	assert.Equal(t, 300, d.Summary.Count)
}

// A policy's RecordsField reaches inside an array's element, even one the
// search would not enter (more elements than a few).
func TestRecordsFieldNamesAnElement(t *testing.T) {
	var sts []any
	for i := range 30 {
		sts = append(sts, map[string]any{"sql": fmt.Sprintf("SELECT %d", i), "rows": orders(10 + i)})
	}
	body := mustJSON(t, map[string]any{"data": map[string]any{"statements": sts}})
	o := newOffloader(t, nil, lro.WithTool("q", lro.ToolPolicy{Generic: true, RecordsField: "data.statements[3].rows"}))
	d, _ := descriptorIn(t, serve(t, o, "q", nil, host.Result{Content: []host.Content{host.TextContent(body)}}), 0)
	assert.Equal(t, "data.statements[3].rows", d.Section)
	assert.Equal(t, 13, d.Summary.Count)
	_, lines := fileRecords(t, d.FilePath)
	assert.JSONEq(t, mustJSON(t, orders(13)[12]), string(lines[12]))

	// Named in a result the search already enters, it comes first.
	o = newOffloader(t, nil, lro.WithTool("execute_sql", lro.ToolPolicy{Generic: true, RecordsField: "data.statements[0].rows"}))
	d, _ = descriptorIn(t, serve(t, o, "execute_sql", nil, host.Result{Content: []host.Content{host.TextContent(dbhubAnswer(t, orders(300), orders(900)))}}), 0)
	assert.Equal(t, "data.statements[0].rows", d.Section)
	assert.Equal(t, 300, d.Summary.Count)
	require.Len(t, d.Sections, 1)
	assert.Equal(t, 900, d.Sections[0].Count)
}
