package lro_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordOverTheLineLimit is issue 38.3: a record longer than the
// longest line a query reads (a thirty-second of MaxHeapBytes: 16 MiB by
// default, 1 MiB here) is an error that names the limit and the ways out,
// and grep and lines still read the file; found records below it (the
// rows of dbhub's statements) never make such a line.
func TestRecordOverTheLineLimit(t *testing.T) {
	t.Parallel()
	o := genericOffloader(t, lro.WithExtractLimits(lro.ExtractLimits{Timeout: 5 * time.Second, MaxHeapBytes: 32 << 20}))
	ctx := context.Background()

	// The rows of one statement, 1.8 MB: before, one 1.8 MB line.
	body := dbhubAnswer(t, orders(24_000))
	require.Greater(t, len(body), 3<<19)
	d, _ := descriptorIn(t, serve(t, o, "execute_sql", nil, host.Result{Content: []host.Content{host.TextContent(body)}}), 0)
	_, lines := fileRecords(t, d.FilePath)
	longest := 0
	for _, l := range lines {
		longest = max(longest, len(l))
	}
	assert.Less(t, longest, 200, "a row a line")
	out, err := o.Extract(ctx, map[string]any{"file_path": d.FilePath, "recipe": 2})
	require.NoError(t, err)
	assert.Contains(t, out, "24000")

	// One record of 1.5 MB: no smaller records are in it.
	huge := mustJSON(t, []any{map[string]any{"id": "doc-1", "body": strings.Repeat("lorem ipsum dolor ", 90_000)}, ticket(1)})
	d, _ = descriptorIn(t, serve(t, o, "fetch", nil, host.Result{Content: []host.Content{host.TextContent(huge)}}), 0)
	_, err = o.Extract(ctx, map[string]any{"file_path": d.FilePath, "recipe": 1})
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "1048576 bytes (1 MiB)", "the limit")
	assert.Contains(t, msg, "grep", "a way out")
	assert.Contains(t, msg, "lines")
	assert.Contains(t, msg, "RecordsField", "the way to records inside it")
	_, err = o.Extract(ctx, map[string]any{"file_path": d.FilePath, "where": []any{map[string]any{"field": "id", "op": "eq", "value": "doc-1"}}, "select": []any{"id"}})
	require.Error(t, err, "a question reads the same lines")
	assert.Contains(t, err.Error(), "1 MiB")
	assert.Contains(t, msg, "record 1 (line 2 of the file)")
	out, err = o.Extract(ctx, map[string]any{"file_path": d.FilePath, "grep": "lorem ipsum"})
	require.NoError(t, err, "grep reads the long line, cut")
	// grep numbers records, not the file's lines (issue 38: the header is
	// not line 1), so the long record is line 1 there.
	assert.True(t, strings.HasPrefix(out, "1:"), "%.80s", out)
	assert.Contains(t, out, "the first is line 1", "the same line, as grep numbers it")
}
