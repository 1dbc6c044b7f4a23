package lro_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/testmcp"
	"github.com/mcplro/lro/mcpgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answersServer serves tools whose results are the given texts, offloaded
// as generic records, and lro_extract, in worker processes or in this
// process.
func answersServer(t *testing.T, inProcess bool, tools map[string]string) (*lro.Offloader, *client.Client) {
	limits := fastExtract
	if inProcess {
		limits = lro.WithExtractLimits(lro.ExtractLimits{Timeout: 3 * time.Second, MaxHeapBytes: 256 << 20, InProcess: true})
	}
	o := newOffloader(t, nil, limits, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	s := server.NewMCPServer("answers", "1", mcpgo.ServerOption(o))
	for name, text := range tools {
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(text), nil
		})
	}
	mcpgo.AddExtractTool(s, o)
	return o, testmcp.Connect(t, s)
}

func where(field, op string, value any) []any {
	return []any{map[string]any{"field": field, "op": op, "value": value}}
}

// TestExtractQuestionOfAbsentFieldsIsAnError: docs/extract.md's own
// example, where status eq delivered, aggregate sum amount, asked of
// records that have neither field (a database server's statements, not
// its rows) answered {"matched":0,"value":null} without an error; it is
// now an error that names both fields and lists the records' own, and a
// misspelt field gets the closest name. A comparison no value can meet
// for its type says so beside its count.
func TestExtractQuestionOfAbsentFieldsIsAnError(t *testing.T) {
	var statements, orders strings.Builder
	statements.WriteString("[")
	orders.WriteString("[")
	for i := range 300 {
		if i > 0 {
			statements.WriteString(",")
			orders.WriteString(",")
		}
		fmt.Fprintf(&statements, `{"sql":"SELECT * FROM orders WHERE id > %d","row_count":50000,"duration_ms":12}`, i)
		fmt.Fprintf(&orders, `{"id":%d,"status":"delivered","amount":"N/A","customer":{"name":"c%d"}}`, i, i%7)
	}
	statements.WriteString("]")
	orders.WriteString("]")
	for _, inProcess := range []bool{false, true} {
		t.Run(fmt.Sprintf("in process %v", inProcess), func(t *testing.T) {
			_, c := answersServer(t, inProcess, map[string]string{"execute_sql": statements.String(), "orders": orders.String()})
			ask := func(tool string, args map[string]any) (string, bool) {
				args["file_path"] = descriptor(t, testmcp.CallTool(t, c, tool, map[string]any{})).FilePath
				res := testmcp.CallTool(t, c, lro.ExtractToolName, args)
				return testmcp.TextOf(t, res, 0), res.IsError
			}

			text, isErr := ask("execute_sql", map[string]any{"where": where("status", "eq", "delivered"), "aggregate": map[string]any{"op": "sum", "field": "amount"}})
			assert.True(t, isErr, text)
			assert.Equal(t, `lro_extract: no record has the fields "status" (where[0].field) and "amount" (aggregate.field) among the 300 records; the records' fields: sql, row_count, duration_ms.`, text)

			text, isErr = ask("orders", map[string]any{"where": where("stauts", "eq", "delivered"), "select": []any{"id", "customer.nmae"}})
			assert.True(t, isErr, text)
			assert.Contains(t, text, `no record has the fields "stauts" (where[0].field) and "customer.nmae" (select[1]) among the 300 records; the records' fields: id, status, amount, customer, customer.name.`)
			assert.Contains(t, text, `Did you mean "status" for "stauts"? Did you mean "customer.name" for "customer.nmae"?`)

			text, isErr = ask("orders", map[string]any{"where": where("amount", "gt", 999), "aggregate": map[string]any{"op": "count"}})
			assert.False(t, isErr, text)
			assert.Equal(t, `{"matched":0,"value":0}`+"\n"+
				`[lro_extract: where[0] (amount gt 999) holds for no record: it compares a number, and no record's amount is a number or a string that reads as one (e.g. "N/A")]`+"\n", text)

			text, isErr = ask("orders", map[string]any{"aggregate": map[string]any{"op": "sum", "field": "amount"}})
			assert.False(t, isErr, text)
			assert.Equal(t, `{"matched":300,"value":null}`+"\n"+
				`[lro_extract: none of the 300 matched records has a number at amount, nor a string that reads as one (e.g. "N/A"), so the sum is null]`+"\n", text)
		})
	}
}

// TestExtractAggregateOfLongValuesIsBounded: min and max of 20 KB
// strings answered 20,025 bytes, over the threshold's bound, and past
// the engine's output (25.6 KB) "internal error: the question's answer
// is malformed (0 values)"; a group_by of such keys showed no group. Now
// every value is cut to fit, ending in the cut marker, and the answer
// says so.
func TestExtractAggregateOfLongValuesIsBounded(t *testing.T) {
	var rows strings.Builder
	rows.WriteString("[")
	for i := range 8 {
		if i > 0 {
			rows.WriteString(",")
		}
		fmt.Fprintf(&rows, `{"id":%d,"f":"%s"}`, i, strings.Repeat(string(rune('a'+i)), 20000+i*1000))
	}
	rows.WriteString("]")
	for _, inProcess := range []bool{false, true} {
		t.Run(fmt.Sprintf("in process %v", inProcess), func(t *testing.T) {
			o, c := answersServer(t, inProcess, map[string]string{"rows": rows.String()})
			path := descriptor(t, testmcp.CallTool(t, c, "rows", map[string]any{})).FilePath
			bound := lro.DefaultConfig().ThresholdTokens
			for _, q := range []struct {
				args map[string]any
				want string // the value's first bytes
			}{
				{map[string]any{"aggregate": map[string]any{"op": "max", "field": "f"}}, `{"matched":8,"value":"hhhh`},
				{map[string]any{"aggregate": map[string]any{"op": "min", "field": "f"}}, `{"matched":8,"value":"aaaa`},
				{map[string]any{"group_by": "f", "aggregate": map[string]any{"op": "count"}}, `{"matched":8,"groups":[{"key":"aaaa`},
				{map[string]any{"group_by": "id", "aggregate": map[string]any{"op": "max", "field": "f"}, "limit": 2}, `{"matched":8,"groups":[{"key":7,"value":"hhhh`},
				{map[string]any{"select": []any{"id", "f"}, "sort": map[string]any{"field": "id", "desc": true}}, `{"matched":8,"records":[{"id":7,"f":"hhhh`},
			} {
				q.args["file_path"] = path
				res := testmcp.CallTool(t, c, lro.ExtractToolName, q.args)
				text := testmcp.TextOf(t, res, 0)
				require.False(t, res.IsError, text)
				assert.True(t, strings.HasPrefix(text, q.want), "%.80s", text)
				assert.Contains(t, text, ` …[cut]"`)
				assert.Contains(t, text, "[lro_extract: long values are cut, each ending in \" …[cut]\"")
				assert.LessOrEqual(t, o.EstimateTokens([]byte(text)), bound, "%d bytes", len(text))
			}
			res := testmcp.CallTool(t, c, lro.ExtractToolName, map[string]any{"file_path": path, "aggregate": map[string]any{"op": "distinct", "field": "f"}})
			assert.Equal(t, `{"matched":8,"value":8}`+"\n", testmcp.TextOf(t, res, 0))
		})
	}
}
