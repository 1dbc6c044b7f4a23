package lro_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/structq/structqtest"
	"github.com/mcplro/lro/internal/testmcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// questionServer serves structqtest's tools, each result offloaded as
// generic records, and lro_extract.
func questionServer(t testing.TB, o *lro.Offloader) *server.MCPServer {
	s := server.NewMCPServer("servers", "1", mcpgo.ServerOption(o))
	for name, text := range structqtest.Tools() {
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(text), nil
		})
	}
	mcpgo.AddExtractTool(s, o)
	return s
}

// TestExtractQuestionsWithoutJQ asks lro_extract the questions of
// structqtest through mcp-go's client, of an orders table, a knowledge
// graph in two sections and nested log events, answered in worker
// processes, and compares each answer with the one computed in Go.
func TestExtractQuestionsWithoutJQ(t *testing.T) {
	for name, limits := range map[string]lro.Option{
		"workers":    fastExtract,
		"in process": lro.WithExtractLimits(lro.ExtractLimits{Timeout: 3 * time.Second, MaxHeapBytes: 256 << 20, InProcess: true}),
	} {
		t.Run(name, func(t *testing.T) {
			o := newOffloader(t, nil, limits, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
			c := testmcp.Connect(t, questionServer(t, o))
			structqtest.Run(t, func(t *testing.T, tool string, args map[string]any) (string, bool) {
				res := testmcp.CallTool(t, c, tool, args)
				return testmcp.TextOf(t, res, 0), res.IsError
			})
		})
	}
}

// TestExtractQuestionSaysWhatItCut: a question whose records are over the
// threshold shows as many as fit, whole, and says how many it shows of
// how many, with the exact count of the records that matched; whole
// records are printed as the file holds them.
func TestExtractQuestionSaysWhatItCut(t *testing.T) {
	o := newOffloader(t, nil, fastExtract, lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
	c := testmcp.Connect(t, questionServer(t, o))
	d := descriptor(t, testmcp.CallTool(t, c, "query", map[string]any{}))
	paid := 0
	for _, o := range structqtest.Orders(structqtest.NumOrders) {
		if o.Status == "paid" {
			paid++
		}
	}
	_, lines := readJSONL(t, readFile(t, d.FilePath))
	for _, sel := range []any{nil, []any{"id", "amount"}} {
		args := map[string]any{"file_path": d.FilePath, "where": []any{map[string]any{"field": "status", "op": "eq", "value": "paid"}}}
		if sel != nil {
			args["select"] = sel
		}
		res := testmcp.CallTool(t, c, lro.ExtractToolName, args)
		require.False(t, res.IsError)
		text := testmcp.TextOf(t, res, 0)
		first, note, _ := strings.Cut(text, "\n")
		var got struct {
			Matched int               `json:"matched"`
			Records []json.RawMessage `json:"records"`
		}
		require.NoError(t, json.Unmarshal([]byte(first), &got))
		assert.Equal(t, paid, got.Matched)
		require.NotEmpty(t, got.Records)
		assert.Less(t, len(got.Records), paid)
		assert.Equal(t, fmt.Sprintf("[lro_extract: showing %d of %d records (%d records matched), as many as fit; lower limit, narrow where, or select fewer fields to see the rest]\n", len(got.Records), paid, paid), note)
		assert.LessOrEqual(t, o.EstimateTokens([]byte(text)), lro.DefaultConfig().ThresholdTokens+100, "about the threshold")
		if sel == nil {
			assert.Contains(t, lines, []byte(got.Records[0]), "the record as the file holds it")
		}
	}
}

// TestExtractQuestionOfMemories: memories answer questions as any records
// do: the count of each memory type at full detail, and the most
// confident memory (provenance.confidence, nested), compared with the
// file's records decoded in Go.
func TestExtractQuestionOfMemories(t *testing.T) {
	c, _ := extractServer(t, nil)
	d := descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 300, "detail": "full"}))
	_, lines := readJSONL(t, readFile(t, d.FilePath))
	counts := map[string]int{}
	best, bestID := -1.0, ""
	for _, l := range lines {
		var m struct {
			ID         string `json:"id"`
			MemoryType string `json:"memory_type"`
			Provenance struct {
				Confidence float64 `json:"confidence"`
			} `json:"provenance"`
		}
		require.NoError(t, json.Unmarshal(l, &m))
		counts[m.MemoryType]++
		if m.Provenance.Confidence > best {
			best, bestID = m.Provenance.Confidence, m.ID
		}
	}
	res := extract(t, c, map[string]any{"file_path": d.FilePath, "group_by": "memory_type", "aggregate": map[string]any{"op": "count"}})
	require.False(t, res.IsError, textOf(t, res, 0))
	var got struct {
		Matched int `json:"matched"`
		Groups  []struct {
			Key   string `json:"key"`
			Count int    `json:"count"`
		} `json:"groups"`
	}
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(textOf(t, res, 0), "\n", 2)[0]), &got))
	assert.Equal(t, len(lines), got.Matched)
	byType := map[string]int{}
	for _, g := range got.Groups {
		byType[g.Key] = g.Count
	}
	assert.Equal(t, counts, byType)

	res = extract(t, c, map[string]any{"file_path": d.FilePath, "sort": map[string]any{"field": "provenance.confidence", "desc": true}, "limit": 1, "select": []any{"id"}})
	assert.Equal(t, fmt.Sprintf(`{"matched":%d,"records":[{"id":%q}]}`+"\n", len(lines), bestID), textOf(t, res, 0))
}
