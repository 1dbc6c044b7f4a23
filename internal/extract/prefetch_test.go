package extract

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcplro/lro/internal/memstore"
	"github.com/stretchr/testify/require"
)

// memoriesFile returns a file of n full memories, header line first.
func memoriesFile(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"type":"lro_header","schema_version":"1.0"}` + "\n")
	for _, m := range memstore.Generate(n, 42) {
		v, err := memstore.Project(&m, "full")
		require.NoError(t, err)
		line, err := json.Marshal(v)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestPrefetchPaths: what a prefetch decodes of 100,000 memories is their
// short fields, their own before their objects', the shortest first,
// never their content, as many as fit the room the cache gives one file.
func TestPrefetchPaths(t *testing.T) {
	data := memoriesFile(t, 2000)
	size := int64(len(data)) * 50 // as if 100,000
	paths := prefetchPaths(bytes.NewReader(data), size, 32<<20)
	t.Log(paths)
	require.NotEmpty(t, paths)
	require.NotContains(t, paths, "content")
	require.Contains(t, paths, "memory_type")
	less := prefetchPaths(bytes.NewReader(data), size, 8<<20)
	require.Less(t, len(less), len(paths), "less room, fewer fields")
	require.Equal(t, paths[:len(less)], less, "the first ones first")
	require.NotContains(t, paths[0], ".", "the records' own fields first")
	require.Empty(t, prefetchPaths(bytes.NewReader(data), size, 1<<20), "not one field fits")

	require.Empty(t, prefetchPaths(bytes.NewReader([]byte("{}\n[1,2]\n[3]\n")), 1<<20, 32<<20), "records that are not objects")
	require.Empty(t, prefetchPaths(bytes.NewReader([]byte("{}\n")), 1<<20, 32<<20), "no record")
}
