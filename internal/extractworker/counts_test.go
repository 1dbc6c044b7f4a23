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

// readCounter counts the bytes read through it.
type readCounter struct {
	r io.Reader
	n *int
}

func (c readCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += n
	return n, err
}

// TestEngineKnowsACountItLearned: the same select of a file again states
// the exact count the first run learned, and reads only what fills its
// output; other values of its variables are counted afresh.
func TestEngineKnowsACountItLearned(t *testing.T) {
	var b strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&b, `{"id":%d,"kind":"k%d","body":%q}`+"\n", i, i%4, strings.Repeat("text ", 40))
	}
	data := []byte(b.String())
	e := &Engine{Queries: &QueryCache{}, Counts: &CountCache{}} // no file cache: every query reads
	read := 0
	in := Input{Key: "f", Size: int64(len(data)), Open: func() (io.Reader, func(), error) {
		return readCounter{bytes.NewReader(data), &read}, func() {}, nil
	}}
	run := func(kind string) *Response {
		t.Helper()
		req := &Request{Query: `select(.kind == $kind)`, Vars: []string{"kind"}, Values: json.RawMessage(fmt.Sprintf(`[%q]`, kind))}
		req.Limits.MaxOutputs = 5
		read = 0
		resp := e.Run(context.Background(), req, in)
		require.Nil(t, resp.Failure)
		require.True(t, resp.Truncated)
		require.False(t, resp.Uncounted)
		return resp
	}
	first := run("k1")
	require.Equal(t, 995, first.Omitted)
	require.Equal(t, len(data), read, "the first run counts to the end")
	second := run("k1")
	require.Equal(t, first.Values, second.Values)
	require.Equal(t, 995, second.Omitted)
	require.Less(t, read, len(data)/2, "the second stops once its output is full")
	other := run("k2")
	require.Equal(t, 995, other.Omitted)
	require.Equal(t, len(data), read, "another value is counted afresh")
}
