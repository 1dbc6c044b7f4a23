package lro_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHugeStringsAreNotCopied: a 2 MB query and a 1 MB namespace are cut
// to a few hundred bytes in the header and the descriptor, and the file
// stays readable by lro_extract.
func TestHugeStringsAreNotCopied(t *testing.T) {
	o := newOffloader(t, nil)
	recs := memories(t, 60, lro.DetailLight)
	var m map[string]any
	require.NoError(t, json.Unmarshal(recs[0], &m))
	m["namespace"] = strings.Repeat("n", 1<<20)
	recs[0], _ = json.Marshal(m)
	query := strings.Repeat("q", 2<<20)
	out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "recall", Query: &query, Records: recs})
	require.NoError(t, err)
	require.Equal(t, lro.Offloaded, out.Action)

	for _, ns := range out.Response.Summary.TopNamespaces {
		assert.LessOrEqual(t, len(ns), 520)
	}
	b, err := json.Marshal(out.Response)
	require.NoError(t, err)
	assert.Less(t, len(b), 8<<10, "the descriptor stays small")

	data := readFile(t, out.Response.FilePath)
	header, _, _ := bytes.Cut(data, []byte("\n"))
	assert.Less(t, len(header), 1<<10, "the header holds the start of the query")
	h, lines := readJSONL(t, data)
	assert.True(t, strings.HasPrefix(*h.Query, "qqqq"))
	assert.True(t, strings.HasSuffix(*h.Query, "…"))
	assert.Len(t, lines, 60, "every record, namespace whole, is in the file")
	assert.Contains(t, string(lines[0]), m["namespace"].(string))

	text, err := o.Extract(context.Background(), map[string]any{"file_path": out.Response.FilePath, "query": ".id"})
	require.NoError(t, err, "lro_extract reads the file")
	assert.Equal(t, 60, strings.Count(text, "\n"), "one id a record")
}

// TestHugeNamesAndExtrasAreNotCopied: field names of 1 MB (in the records,
// as a section's path), a 4 MB extra field and a record of ten thousand
// fields leave the descriptor small; the file holds them all.
func TestHugeNamesAndExtrasAreNotCopied(t *testing.T) {
	long := strings.Repeat("f", 1<<20)
	t.Run("engine", func(t *testing.T) {
		o := newOffloader(t, nil)
		wideRec := map[string]int{}
		for i := range 10000 {
			wideRec["k"+strings.Repeat("0", i%7)+string(rune('a'+i%26))+strings.Repeat("z", i/26%50)] = i
		}
		var recs []json.RawMessage
		for i := range 50 {
			r, _ := json.Marshal(map[string]any{long: i, "id": i})
			recs = append(recs, r)
		}
		w, _ := json.Marshal(wideRec)
		recs = append(recs, w)
		extra := map[string]json.RawMessage{
			"total": json.RawMessage(`51`),
			"blob":  json.RawMessage(`"` + strings.Repeat("b", 4<<20) + `"`),
			long:    json.RawMessage(`1`),
		}
		out, err := o.Offload(context.Background(), lro.ResultSet{Operation: "dump", Generic: true, Records: recs, Extra: extra, Tokens: 1 << 22})
		require.NoError(t, err)
		require.Equal(t, lro.Offloaded, out.Action)
		b, err := json.Marshal(out.Response)
		require.NoError(t, err)
		assert.Less(t, len(b), 16<<10, "the descriptor stays small")
		assert.JSONEq(t, `51`, string(out.Response.Summary.Extra["total"]), "small fields are copied whole")
		assert.Contains(t, string(out.Response.Summary.Extra["blob"]), "4194306 bytes, not copied")
		assert.Equal(t, 51, countLines(t, out.Response.FilePath)-1)
	})
	t.Run("middleware", func(t *testing.T) {
		o := newOffloader(t, nil, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
		var rows []string
		for i := range 300 {
			rows = append(rows, `{"id":`+strings.Repeat("1", 1+i%5)+`,"v":"`+strings.Repeat("x", 40)+`"}`)
		}
		payload := `{"` + long + `":[` + strings.Join(rows, ",") + `],"` + long + `x":[` + strings.Join(rows, ",") + `]}`
		out := serveDump(t, o, mcp.NewToolResultText(payload))
		text := out.Content[0].(mcp.TextContent).Text
		assert.Less(t, len(text), 16<<10, "the descriptor stays small")
		var d lro.OffloadResponse
		require.NoError(t, json.Unmarshal([]byte(text), &d))
		require.True(t, d.Offloaded)
		assert.LessOrEqual(t, len(d.Section), 131)
		require.Len(t, d.Sections, 1)
		assert.Equal(t, 300, d.Sections[0].Count)
	})
}
