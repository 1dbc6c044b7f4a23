package lro_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/mcpgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// payloadShapes are results whose records are many and tiny, or few and
// huge: the shapes that cost most per payload byte to find records in.
func payloadShapes(size int) []struct {
	name    string
	payload string
	records int
} {
	tiny := "[" + strings.Repeat("0,", size/2-1) + "0]"
	huge := `{"id":1,"body":"` + strings.Repeat("x", size) + `"}`
	var members strings.Builder
	for i := 0; members.Len() < size; i++ {
		if i > 0 {
			members.WriteByte(',')
		}
		fmt.Fprintf(&members, `"k%d":%d`, i, i)
	}
	n := strings.Count(members.String(), ":")
	quoted, _ := json.Marshal(strings.Repeat("a\n", size/2))
	return []struct {
		name    string
		payload string
		records int
	}{
		{"short lines", strings.Repeat("x\n", size/2), size / 2},
		{"crlf", strings.Repeat("x\r\n", size/3), size / 3},
		{"tiny array", tiny, size / 2},
		{"huge field", "[" + huge + "," + huge + "]", 2},
		{"object members", `{"data":{"ids":{` + members.String() + "}}}", n},
		{"top-level object members", "{" + members.String() + "}", n},
		{"text in a string field", `{"id":1,"log":` + string(quoted) + `}`, size / 2},
		{"one long line", string(quoted), 1},
	}
}

// TestPayloadMemoryBound offloads each payload shape through the
// middleware and checks what it allocated: at most twice the payload,
// however many records it holds (a slice of records would cost fifty
// bytes and more a record: 170 times the payload for newlines).
func TestPayloadMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 200 MB of files")
	}
	const size = 2 << 20
	for _, shape := range payloadShapes(size) {
		t.Run(shape.name, func(t *testing.T) {
			o := newOffloader(t, nil, lro.WithoutJanitor(), lro.WithAnyTool(lro.ToolPolicy{Generic: true}))
			res := mcp.NewToolResultText(shape.payload)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out := serveDump(t, o, res)
			runtime.ReadMemStats(&after)

			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %d records, payload %d bytes, allocated %d bytes (%.2f× the payload)",
				shape.name, shape.records, len(shape.payload), allocated, float64(allocated)/float64(len(shape.payload)))
			assert.LessOrEqual(t, allocated, uint64(2*len(shape.payload)), "allocated more than twice the payload")

			var d lro.OffloadResponse
			require.NoError(t, json.Unmarshal([]byte(out.Content[0].(mcp.TextContent).Text), &d))
			require.True(t, d.Offloaded)
			assert.Equal(t, shape.records, countLines(t, d.FilePath)-1, "record lines in the file")
			assert.Equal(t, shape.records, d.Summary.Count)
		})
	}
}

// serveDump sends res through the mcp-go middleware as the result of the
// tool "dump".
func serveDump(t testing.TB, o *lro.Offloader, res *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = "dump"
	out, err := mcpgo.Middleware(o)(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, nil })(context.Background(), req)
	require.NoError(t, err)
	require.NotNil(t, out)
	return out
}

// countLines counts the lines of a file without holding it.
func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 && bytes.HasSuffix(line, []byte("\n")) {
			n++
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return n
		}
	}
}

// TestResultCap: a result over WithMaxResultBytes gets the truncated
// fallback, its warning and event, and no file.
func TestResultCap(t *testing.T) {
	dir := t.TempDir()
	var events []lro.WriteFailedEvent
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir },
		lro.WithAnyTool(lro.ToolPolicy{Generic: true}), lro.WithMaxResultBytes(32<<10),
		lro.WithHooks(lro.Hooks{OnWriteFailed: func(e lro.WriteFailedEvent) { events = append(events, e) }}))
	var rows []string
	for i := range 1000 {
		rows = append(rows, fmt.Sprintf(`{"id":%d,"text":"row %d of the table"}`, i, i))
	}
	payload := "[" + strings.Join(rows, ",") + "]"
	require.Greater(t, len(payload), 32<<10)
	out := serveDump(t, o, mcp.NewToolResultText(payload))
	require.False(t, out.IsError)

	var kept []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out.Content[0].(mcp.TextContent).Text), &kept), "the records that fit, as an array")
	assert.NotEmpty(t, kept)
	assert.Less(t, len(kept), 1000)
	assert.EqualValues(t, 0, kept[0]["id"])
	require.Len(t, events, 1)
	assert.ErrorIs(t, events[0].Err, lro.ErrResultTooLarge)
	assert.Equal(t, 1000, events[0].Count)
	assert.Equal(t, len(kept), events[0].Kept)
	warned := false
	for _, c := range out.Content[1:] {
		if tc, ok := c.(mcp.TextContent); ok && strings.Contains(tc.Text, "cap on results") {
			warned = true
		}
	}
	assert.True(t, warned, "a warning says why: %v", out.Content)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no file")
}
