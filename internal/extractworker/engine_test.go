package extractworker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// engineInput is an Input over data that counts the times it is opened.
func engineInput(key string, data []byte, opened *int) Input {
	return Input{Key: key, Size: int64(len(data)), Open: func() (io.Reader, func(), error) {
		*opened++
		return bytes.NewReader(data), func() {}, nil
	}}
}

func TestEngineCachesWhatASelectReads(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `{"id":%d,"title":"record %d","body":%q,"tags":["a","b"]}`+"\n", i, i, strings.Repeat("text ", 40))
	}
	data := []byte(b.String())
	stream := &Engine{Queries: &QueryCache{}} // no cache: every query reads the file
	e := &Engine{Files: NewFileCache(32 << 20), Queries: &QueryCache{}}
	opened, streamed := 0, 0
	run := func(e *Engine, query string) *Response {
		t.Helper()
		count := &opened
		if e == stream {
			count = &streamed
		}
		resp := e.Run(context.Background(), &Request{Query: query}, engineInput("f", data, count))
		require.Nil(t, resp.Failure, query)
		return resp
	}

	// The first query of the file, a select, keeps only the title of each
	// record, and the lines: a fraction of the records decoded whole.
	sel := `select(.title|test("record 1[0-9]$"))`
	first := run(e, sel)
	require.Equal(t, 1, opened)
	require.Len(t, first.Values, 10)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(first.Values[0], &rec))
	require.Contains(t, rec, "body", "the output is the whole record")
	require.Equal(t, run(stream, sel).Values, first.Values)
	recs, ok := e.Files.Get("f")
	require.True(t, ok)
	require.Equal(t, "{title:*}+lines", recs.Projection().String())
	require.Less(t, e.Files.Used(), 2*int64(len(data)))

	// The cached records answer it again, and any query on the title,
	// without reading the file.
	require.Equal(t, first.Values, run(e, sel).Values)
	require.True(t, run(e, `.title`).Cached)
	require.Equal(t, 1, opened)

	// A query that reads more decodes the file again, for both.
	opened = 0
	require.Equal(t, run(stream, `{id,title}`).Values, run(e, `{id,title}`).Values)
	require.Equal(t, 1, opened)
	recs, _ = e.Files.Get("f")
	require.Equal(t, "{id:*,title:*}+lines", recs.Projection().String())
	require.Equal(t, first.Values, run(e, sel).Values)
	require.Equal(t, 1, opened)
}
