package lro_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

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
