package lro_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcplro/lro/mcpgo"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcplro/lro"
	"github.com/mcplro/lro/lrotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cursorRows yields n JSON records through one reused buffer, as a database
// cursor would, failing at record fail (when >= 0).
func cursorRows(n, fail int) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		buf := make([]byte, 0, 128)
		for i := range n {
			if i == fail {
				yield(nil, errors.New("cursor: connection reset"))
				return
			}
			buf = fmt.Appendf(buf[:0], `{"id":%d,"name":"row %d","note":"%s"}`, i, i, strings.Repeat("x", i%40))
			if !yield(buf, nil) {
				return
			}
		}
	}
}

// streamingTool returns a handler that hands cursorRows(n, fail) to CollectSeq
// and, when they are not offloaded, returns them as a JSON array.
func streamingTool(t *testing.T, n, fail int) func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		recs, offloaded, err := lro.CollectSeq(ctx, cursorRows(n, fail))
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if offloaded {
			return mcp.NewToolResultText("placeholder"), nil
		}
		b, err := json.Marshal(recs)
		require.NoError(t, err)
		return mcp.NewToolResultText(string(b)), nil
	}
}

func callStreaming(t *testing.T, o *lro.Offloader, n, fail int) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = "rows"
	out, err := mcpgo.Middleware(o)(streamingTool(t, n, fail))(context.Background(), req)
	require.NoError(t, err)
	return out
}

func TestCollectSeq(t *testing.T) {
	dir := t.TempDir()
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir }, lro.WithTool("rows", lro.ToolPolicy{Generic: true}), lro.WithoutJanitor())

	t.Run("a small set is the handler's", func(t *testing.T) {
		out := callStreaming(t, o, 5, -1)
		var got []map[string]any
		require.NoError(t, json.Unmarshal([]byte(out.Content[0].(mcp.TextContent).Text), &got))
		require.Len(t, got, 5)
		for i, r := range got {
			assert.EqualValues(t, i, r["id"], "each record its own, though the cursor reused its buffer")
		}
	})

	t.Run("a large set is offloaded whole, in order", func(t *testing.T) {
		out := callStreaming(t, o, 20000, -1)
		d := descriptorOf(t, out)
		assert.Equal(t, 20000, d.Summary.Count)
		h, lines := readJSONL(t, readFile(t, d.FilePath))
		assert.Equal(t, 20000, h.Count)
		require.Len(t, lines, 20000)
		for _, i := range []int{0, 1, 9999, 19999} {
			var r map[string]any
			require.NoError(t, json.Unmarshal(lines[i], &r))
			assert.EqualValues(t, i, r["id"])
		}
		assertOnlyPublished(t, dir)
	})

	t.Run("a cursor error fails the call, leaving nothing", func(t *testing.T) {
		before := published(t, dir)
		out := callStreaming(t, o, 20000, 15000)
		assert.True(t, out.IsError)
		assert.Contains(t, out.Content[0].(mcp.TextContent).Text, "connection reset")
		assert.Equal(t, before, published(t, dir))
		assertOnlyPublished(t, dir)
	})

	t.Run("without the middleware every record comes back", func(t *testing.T) {
		recs, offloaded, err := lro.CollectSeq(context.Background(), cursorRows(3000, -1))
		require.NoError(t, err)
		assert.False(t, offloaded)
		assert.Len(t, recs, 3000)
	})

	t.Run("a record that is not JSON", func(t *testing.T) {
		bad := func(yield func(json.RawMessage, error) bool) { yield(json.RawMessage(`{"a":`), nil) }
		_, _, err := lro.CollectSeq(context.Background(), bad)
		var recErr *lro.RecordError
		require.ErrorAs(t, err, &recErr)
		assert.Equal(t, 0, recErr.Index)
	})
}

// TestCollectSeqOverTheCap: a streamed set that outgrows the per-file cap
// gets the truncated fallback (its first records, a warning, an event),
// never a failed call, and its spool is removed.
func TestCollectSeqOverTheCap(t *testing.T) {
	dir := t.TempDir()
	var events []lro.WriteFailedEvent
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir }, lro.WithTool("rows", lro.ToolPolicy{Generic: true}),
		lro.WithoutJanitor(), lro.WithMaxFileBytes(256<<10),
		lro.WithHooks(lro.Hooks{OnWriteFailed: func(e lro.WriteFailedEvent) { events = append(events, e) }}))
	out := callStreaming(t, o, 20000, -1)
	require.False(t, out.IsError)
	var kept []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out.Content[0].(mcp.TextContent).Text), &kept))
	assert.NotEmpty(t, kept)
	assert.EqualValues(t, 0, kept[0]["id"])
	require.Len(t, events, 1)
	assert.ErrorIs(t, events[0].Err, lro.ErrFileTooLarge)
	assert.Equal(t, 20000, events[0].Count)
	assert.Equal(t, len(kept), events[0].Kept)
	assertOnlyPublished(t, dir)
	assert.Zero(t, published(t, dir))
}

func descriptorOf(t *testing.T, out *mcp.CallToolResult) lro.OffloadResponse {
	t.Helper()
	var d lro.OffloadResponse
	require.NoError(t, json.Unmarshal([]byte(out.Content[0].(mcp.TextContent).Text), &d))
	require.True(t, d.Offloaded)
	return d
}

// published counts the published files in dir.
func published(t *testing.T, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "atlatl-*.jsonl"))
	require.NoError(t, err)
	return len(files)
}

// assertOnlyPublished checks that dir holds no temporary file or spool.
func assertOnlyPublished(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "left behind: %s", e.Name())
	}
}

// storeLike is an FS like an object store's: remote, and unable to read
// a file back before it is published.
type storeLike struct{ lro.FS }

func (storeLike) Remote() bool { return true }

func (s storeLike) Open(name string) (fs.File, error) {
	if strings.HasPrefix(name, ".") {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return s.FS.Open(name)
}

// TestCollectSeqToAStore: with an object store, the streamed set is
// spooled in a private local directory, and the store gets the file.
func TestCollectSeqToAStore(t *testing.T) {
	mem := lrotest.NewMemFS("/store")
	o := newOffloader(t, nil, lro.WithFS(storeLike{mem}), lro.WithTool("rows", lro.ToolPolicy{Generic: true}), lro.WithoutJanitor())
	spools := func() []string {
		m, err := filepath.Glob(filepath.Join(os.TempDir(), "lro-spool-*"))
		require.NoError(t, err)
		return m
	}
	before := spools()
	d := descriptorOf(t, callStreaming(t, o, 20000, -1))
	assert.Equal(t, 20000, d.Summary.Count)
	entries, err := mem.ReadDir()
	require.NoError(t, err)
	require.Len(t, entries, 1, "the file, and nothing else, in the store")
	assert.Equal(t, filepath.Base(d.FilePath), entries[0].Name())
	assert.Equal(t, before, spools(), "the local spool is gone")
}

// TestCollectSeqLostWithALargeFirstRecord: a streamed set whose spool
// failed keeps in memory only the first records that fit the threshold.
// When not even its first does, the result is the warning alone: it used
// to carry an empty text item after it, where a set held whole shows its
// first record cut.
func TestCollectSeqLostWithALargeFirstRecord(t *testing.T) {
	dir := t.TempDir()
	o := newOffloader(t, func(c *lro.Config) { c.OutputDir = dir }, lro.WithTool("rows", lro.ToolPolicy{Generic: true}),
		lro.WithoutJanitor(), lro.WithMaxFileBytes(64<<10))
	big := strings.Repeat("y", 20<<10) // 5,000 tokens: over the threshold alone
	rows := func(yield func(json.RawMessage, error) bool) {
		for i := range 10 {
			if !yield(json.RawMessage(fmt.Sprintf(`{"id":%d,"body":"%s"}`, i, big)), nil) {
				return
			}
		}
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "rows"
	out, err := mcpgo.Middleware(o)(func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_, offloaded, err := lro.CollectSeq(ctx, rows)
		require.NoError(t, err)
		require.True(t, offloaded, "past the threshold, the set is the Offloader's")
		return mcp.NewToolResultText("placeholder"), nil
	})(context.Background(), req)
	require.NoError(t, err)
	require.False(t, out.IsError)
	require.NotEmpty(t, out.Content)
	for i, c := range out.Content {
		text, ok := c.(mcp.TextContent)
		require.True(t, ok, "item %d is text", i)
		assert.NotEmpty(t, strings.TrimSpace(text.Text), "item %d of %d is empty", i, len(out.Content))
	}
	assert.Contains(t, out.Content[len(out.Content)-1].(mcp.TextContent).Text, "lro:", "the warning says what happened")
	assertOnlyPublished(t, dir)
}
