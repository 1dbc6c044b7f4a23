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

func TestEngineKeepsWhatAQueryOfALargeFileRead(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `{"id":%d,"title":"record %d","body":%q}`+"\n", i, i, strings.Repeat("text ", 200))
	}
	data := []byte(b.String())
	// Too large for its records to be decoded beforehand; the fields two
	// queries read fit.
	files := NewFileCache(int64(len(data)) * 5 / 4)
	require.False(t, files.Fits(int64(len(data))))
	e := &Engine{Files: files, Queries: &QueryCache{}}
	stream := &Engine{Queries: &QueryCache{}}
	opened, streamed := 0, 0
	run := func(e *Engine, key string, req Request) *Response {
		t.Helper()
		count := &opened
		if e == stream {
			count = &streamed
		}
		resp := e.Run(context.Background(), &req, engineInput(key, data, count))
		require.Nil(t, resp.Failure, req.Query)
		return resp
	}

	// A query that reads every record keeps what it read of them; the
	// next queries that read no more are answered from them.
	list := Request{Query: `{id,title}`}
	first := run(e, "f", list)
	require.True(t, first.Cached, "kept: the next query is best sent here")
	require.Equal(t, run(stream, "f", list).Values, first.Values)
	require.Len(t, first.Values, 200)
	recs, ok := files.Get("f")
	require.True(t, ok)
	require.Equal(t, "{id:*,title:*}", recs.Projection().String())
	second := run(e, "f", list)
	require.True(t, second.Cached)
	require.Equal(t, first.Values, second.Values)
	count := Request{Query: `map(.title)|length`, Slurp: true}
	require.Equal(t, run(stream, "f", count).Values, run(e, "f", count).Values)
	require.Equal(t, 1, opened, "answered from the records kept")

	// Nor does a query whose records, with their lines, do not fit.
	run(e, "h", Request{Query: `select(.title == "record 7")`})
	_, ok = files.Get("h")
	require.False(t, ok)

	// A query whose output is full reads every record still, to count
	// the results it leaves out exactly: it keeps them too.
	big := bytes.Repeat(data, 20)
	large := &Engine{Files: NewFileCache(int64(len(big)) * 5 / 4), Queries: &QueryCache{}}
	cut := Request{Query: `select(.id >= 0)|{id,title}`}
	cut.Limits.MaxOutputs = 3
	resp := large.Run(context.Background(), &cut, engineInput("g", big, &opened))
	require.Nil(t, resp.Failure)
	require.True(t, resp.Truncated)
	require.False(t, resp.Uncounted)
	require.Equal(t, 20*200-3, resp.Omitted)
	_, ok = large.Files.Get("g")
	require.True(t, ok, "read to the end")

	// Unless it yields one result per record: it counts the rest from
	// their lines (jqsandbox.Query.Skims), and keeps nothing.
	cut = list
	cut.Limits.MaxOutputs = 3
	resp = large.Run(context.Background(), &cut, engineInput("k", big, &opened))
	require.Nil(t, resp.Failure)
	require.False(t, resp.Uncounted)
	require.Equal(t, 20*200-3, resp.Omitted)
	_, ok = large.Files.Get("k")
	require.False(t, ok, "skimmed")
}
