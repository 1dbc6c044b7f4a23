//go:build unix

package extractworker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoolRunsText: grep and lines requests run in a worker over the whole
// file, its first record as line 1 (textlines.Body), and an invalid
// pattern or range fails as the query's fault.
func TestPoolRunsText(t *testing.T) {
	p := testPool(t, Config{Workers: 1})
	path, id := jsonlFile(t, 100)
	run := func(query string, text TextRequest) *Response {
		t.Helper()
		req := request(path, id, query, 5*time.Second)
		text.Budget = 4096
		req.Text = &text
		resp, err := p.Run(context.Background(), req, 5*time.Second, 1<<20)
		require.NoError(t, err)
		return resp
	}
	resp := run(`record 4[0-2]"`, TextRequest{Context: 1})
	require.Nil(t, resp.Failure)
	require.NotNil(t, resp.Text)
	assert.Equal(t, 3, resp.Text.Matches)
	assert.Equal(t, 100, resp.Text.Lines)
	assert.Equal(t, "40-{\"id\":39,\"title\":\"record 39\",\"tags\":[\"a\",\"b\"]}\n"+
		"41:{\"id\":40,\"title\":\"record 40\",\"tags\":[\"a\",\"b\"]}\n"+
		"42:{\"id\":41,\"title\":\"record 41\",\"tags\":[\"a\",\"b\"]}\n"+
		"43:{\"id\":42,\"title\":\"record 42\",\"tags\":[\"a\",\"b\"]}\n"+
		"44-{\"id\":43,\"title\":\"record 43\",\"tags\":[\"a\",\"b\"]}\n", string(resp.Values[0]))

	resp = run("", TextRequest{Lines: "1-2"})
	require.Nil(t, resp.Failure)
	assert.Equal(t, `{"id":0,"title":"record 0","tags":["a","b"]}`+"\n"+`{"id":1,"title":"record 1","tags":["a","b"]}`+"\n", string(resp.Values[0]))

	resp = run("RECORD 7\"", TextRequest{IgnoreCase: true})
	require.Nil(t, resp.Failure)
	assert.Equal(t, 1, resp.Text.Matches)

	resp = run("(", TextRequest{})
	require.NotNil(t, resp.Failure)
	assert.Equal(t, KindQuery, resp.Failure.Kind)
	assert.Contains(t, resp.Failure.Message, "invalid pattern")
	resp = run("", TextRequest{Lines: "0"})
	require.NotNil(t, resp.Failure)
	assert.Equal(t, KindQuery, resp.Failure.Kind)
	assert.Contains(t, resp.Failure.Message, "lines are numbered from 1")

	// Another file at the path is refused, as for a query.
	other := id
	other.Ino++
	req := request(path, other, "x", 5*time.Second)
	req.Text = &TextRequest{Budget: 4096}
	resp, err := p.Run(context.Background(), req, 5*time.Second, 1<<20)
	require.NoError(t, err)
	require.NotNil(t, resp.Failure)
	assert.Contains(t, resp.Failure.Message, "the file changed")
}
