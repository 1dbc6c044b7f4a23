package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/mcpgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logsTool returns n log records in an object that also says how many
// there are, and echoes what was asked.
func logsTool(n int, count any) server.ToolHandlerFunc {
	return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		logs := make([]map[string]any, n)
		for i := range logs {
			logs[i] = map[string]any{"level": []string{"INFO", "WARN"}[i%2], "message": fmt.Sprintf("request %d took > %d ms & failed <again>", i, i%500)}
		}
		return mcp.NewToolResultJSON(map[string]any{"service": "checkout", "count": count, "logs": logs})
	}
}

// TestExtraDoesNotRepeatTheSummary: a result's own count of its records is
// the summary's count; it is not copied into summary.extra. Other fields,
// and a count that says something else, are.
func TestExtraDoesNotRepeatTheSummary(t *testing.T) {
	o := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	s := server.NewMCPServer("logs", "1", mcpgo.ServerOption(o))
	s.AddTool(mcp.NewTool("get_logs"), logsTool(300, 300))
	s.AddTool(mcp.NewTool("page_of_logs"), logsTool(300, 5000))
	c := connect(t, s)

	d := descriptor(t, callTool(t, c, "get_logs", nil))
	assert.Equal(t, 300, d.Summary.Count)
	assert.Equal(t, map[string]json.RawMessage{"service": json.RawMessage(`"checkout"`)}, d.Summary.Extra)

	d = descriptor(t, callTool(t, c, "page_of_logs", nil))
	assert.JSONEq(t, `5000`, string(d.Summary.Extra["count"]), "a total of 5000 beside 300 records is news")
	assert.Contains(t, d.Summary.Extra, "service")

	// The memory server's recall echoes its query, which the file's
	// header keeps, and its count: nothing is left to repeat, and the
	// descriptor keeps to the specification's fields.
	ms, _ := memServer(t, nil)
	d = descriptor(t, callTool(t, connect(t, ms), "recall_memories", map[string]any{"query": "cache", "limit": 200, "detail": "full"}))
	assert.Empty(t, d.Summary.Extra)
	assert.Empty(t, d.Section)
	// Within the budget as the model reads it, with the path made 60
	// characters long wherever it appears.
	text := textOf(t, callTool(t, connect(t, ms), "recall_memories", map[string]any{"query": "cache", "limit": 200, "detail": "full"}), 0)
	var got lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(text), &got))
	at60 := strings.ReplaceAll(text, got.FilePath, "/"+strings.Repeat("p", 58-len(filepath.Base(got.FilePath)))+"/"+filepath.Base(got.FilePath))
	assert.LessOrEqual(t, len(at60)/4, 700, "the example's recall at full detail: %d bytes", len(at60))
}

// TestPlaceholdersHaveOneSpelling: a parameter only the caller can fill
// shows as its name in capitals, in the memory recipes and the inferred
// ones alike, never as "keyword" beside "TAG". The inferred recipes fill a
// search term with a word of the records, so that they answer as written
// (issue 39): no placeholder there.
func TestPlaceholdersHaveOneSpelling(t *testing.T) {
	o := newOffloader(t, nil)
	for _, d := range []lro.Detail{lro.DetailLight, lro.DetailMedium, lro.DetailFull} {
		for i, r := range o.Recipes(d) {
			for _, p := range r.Params {
				if strings.EqualFold(p.Default, p.Name) {
					assert.Equal(t, strings.ToUpper(p.Name), p.Default, "%s recipe %d", d, i+1)
				}
			}
		}
	}
	var commands []string
	for _, r := range o.Recipes(lro.DetailFull) {
		commands = append(commands, r.ShellFilter())
	}
	assert.Contains(t, strings.Join(commands, "\n"), `test("KEYWORD";"i")`)
	assert.Contains(t, strings.Join(commands, "\n"), `index("TAG")`)

	g := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	s := server.NewMCPServer("generic", "1", mcpgo.ServerOption(g))
	s.AddTool(mcp.NewTool("tickets"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rows := make([]map[string]any, 400)
		for i := range rows {
			rows[i] = map[string]any{"id": i, "state": []string{"open", "closed"}[i%2], "labels": []string{"bug", fmt.Sprint("l", i%7)},
				"body": strings.Repeat(fmt.Sprint("text ", i), 5)}
		}
		return mcp.NewToolResultJSON(rows)
	})
	s.AddTool(mcp.NewTool("tail"), bigText(2000))
	c := connect(t, s)
	for _, tool := range []string{"tickets", "tail"} {
		for _, r := range descriptor(t, callTool(t, c, tool, nil)).JQRecipes {
			for _, lower := range []string{`"keyword"`, `"value"`, `"tag"`} {
				assert.NotContains(t, r.Command, lower, "%s: %s", tool, r.Description)
			}
			for _, upper := range []string{`"KEYWORD"`, `"VALUE"`, `"TAG"`} {
				assert.NotContains(t, r.Command, upper, "%s: %s: a word of the records", tool, r.Description)
			}
		}
	}
}

// TestEveryRecipeRunsAsWritten runs each descriptor command exactly as a
// model would copy it, defaults and placeholders included, with jq 1.6.
func TestEveryRecipeRunsAsWritten(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("needs the jq binary")
	}
	o := newOffloader(t, nil)
	for _, d := range []lro.Detail{lro.DetailLight, lro.DetailMedium, lro.DetailFull} {
		out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: d, Records: memories(t, 50, d)})
		require.NoError(t, err)
		for _, r := range out.Response.JQRecipes {
			lro.RunCut(t, r.Command) // fails the test on an error of jq
		}
	}
}

// TestJSONIsNotHTMLEscaped: what the model reads keeps '<', '>' and '&'
// as they are, not \u003c, \u003e and \u0026: the header, the records made
// from text lines, inferred schemas and recipe literals.
func TestJSONIsNotHTMLEscaped(t *testing.T) {
	o := newOffloader(t, func(c *lro.Config) { c.ThresholdTokens = 1 })
	query := `level > warn & service <checkout>`
	var recs []json.RawMessage
	for i := range 40 {
		recs = append(recs, json.RawMessage(fmt.Sprintf(`{"a<b":%d,"state":"p>1 & <q>","n":%d}`, i, i)))
	}
	out, err := o.Offload(ctx, lro.ResultSet{Operation: "logs", Query: &query, Generic: true, Records: recs})
	require.NoError(t, err)
	header, _, _ := strings.Cut(string(readFile(t, out.Response.FilePath)), "\n")
	assert.Contains(t, header, `"query":"level > warn & service <checkout>"`)
	assert.Contains(t, string(out.Response.LineSchema), `"a<b"`)
	all := ""
	for _, r := range out.Response.JQRecipes {
		all += r.Command + "\n"
	}
	assert.Contains(t, all, `.["a<b"]`)

	s, _ := genericServer(t)
	s.AddTool(mcp.NewTool("html_lines"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strings.Repeat("<li>a & b > c</li>\n", 3000)), nil
	})
	d := descriptor(t, callTool(t, connect(t, s), "html_lines", nil))
	_, lines := readJSONL(t, readFile(t, d.FilePath))
	assert.Equal(t, `{"line":1,"text":"<li>a & b > c</li>"}`, string(lines[0]))

	for _, text := range []string{header, string(out.Response.LineSchema), all, string(lines[0])} {
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			assert.NotContains(t, text, esc)
		}
	}
}

// TestLineSchemaNamesEveryField: the line schema of each detail level is a
// valid JSON Schema that every line of the file satisfies, and it names
// exactly the fields the lines have. It gives fewer types than it could
// (full detail names most fields only, for the descriptor's budget), but
// what it says is true.
func TestLineSchemaNamesEveryField(t *testing.T) {
	o := newOffloader(t, nil)
	for _, d := range []lro.Detail{lro.DetailLight, lro.DetailMedium, lro.DetailFull} {
		out, err := o.Offload(ctx, lro.ResultSet{Operation: "recall", Detail: d, Records: memories(t, 200, d)})
		require.NoError(t, err)
		schema := compileSchema(t, out.Response.LineSchema)
		var named struct {
			Properties map[string]any `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(out.Response.LineSchema, &named))
		fields := map[string]any{}
		refused := ""
		_, lines := readJSONL(t, readFile(t, out.Response.FilePath))
		for i, l := range lines {
			if refused == "" && !admits(t, schema, string(l)) {
				refused = fmt.Sprintf("line %d: %s", i+2, l)
			}
			var m map[string]any
			require.NoError(t, json.Unmarshal(l, &m))
			maps.Copy(fields, m)
		}
		assert.Empty(t, refused, "%s: a line the schema does not admit", d)
		assert.ElementsMatch(t, mapKeys(fields), mapKeys(named.Properties), "%s: the fields of the lines, and those the schema names", d)
	}
}
