package extractworker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// questionFile returns n records whose type cycles through types.
func questionFile(n int, types ...string) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":%d,"type":%q,"score":%d.5}`+"\n", i, types[i%len(types)], i)
	}
	return []byte(b.String())
}

// trustedQuestion is the request lro_extract makes of a question.
func trustedQuestion(t *testing.T, question string) *Request {
	t.Helper()
	req := questionRequest(t, question)
	req.Trusted = true
	req.Limits.MaxOutputBytes = 64 << 10
	return req
}

// TestEngineAnswersAQuestionAgain: the same question of the same file is
// answered from the answer kept, without reading the file (issue 40: the
// second call of a question cost 0.91x its first), and the answer is the
// one computed without the cache; another question, or other values,
// is computed.
func TestEngineAnswersAQuestionAgain(t *testing.T) {
	data := questionFile(300, "a", "b", "c")
	// No file cache: only the answer cache can spare a read.
	e := &Engine{Queries: &QueryCache{}, Answers: NewAnswerCache(DefaultAnswerBytes)}
	plain := &Engine{Queries: &QueryCache{}}
	opened, plainOpened := 0, 0
	count := trustedQuestion(t, `{"where": [{"field": "type", "op": "eq", "value": "b"}], "aggregate": {"op": "sum", "field": "score"}}`)

	first := e.Run(context.Background(), count, engineInput("f", data, &opened))
	require.Nil(t, first.Failure)
	require.Equal(t, 1, opened)
	require.True(t, first.Cached, "the pool is told to send the file's next query here")
	want := plain.Run(context.Background(), count, engineInput("f", data, &plainOpened))
	require.Equal(t, want.Values, first.Values)
	require.Contains(t, string(first.Values[0]), `"matched":100`)

	again := e.Run(context.Background(), count, engineInput("f", data, &opened))
	require.Equal(t, 1, opened, "answered without reading the file")
	require.Equal(t, first.Values, again.Values)
	require.Equal(t, first.Truncated, again.Truncated)
	require.True(t, again.Cached)

	other := trustedQuestion(t, `{"where": [{"field": "type", "op": "eq", "value": "c"}], "aggregate": {"op": "sum", "field": "score"}}`)
	resp := e.Run(context.Background(), other, engineInput("f", data, &opened))
	require.Equal(t, 2, opened, "other values are another question")
	require.Equal(t, plain.Run(context.Background(), other, engineInput("f", data, &plainOpened)).Values, resp.Values)

	// A smaller output bound may cut the answer: it is another key.
	small := trustedQuestion(t, `{"where": [{"field": "type", "op": "eq", "value": "b"}], "aggregate": {"op": "sum", "field": "score"}}`)
	small.Limits.MaxOutputBytes = 32 << 10
	e.Run(context.Background(), small, engineInput("f", data, &opened))
	require.Equal(t, 3, opened)
}

// TestEngineAnswerOfAReplacedFile: a file replaced (another inode, size
// or modification time: another key) is read again, and answered with
// its own records; the answers of a file forgotten are dropped.
func TestEngineAnswerOfAReplacedFile(t *testing.T) {
	e := &Engine{Queries: &QueryCache{}, Answers: NewAnswerCache(DefaultAnswerBytes)}
	q := trustedQuestion(t, `{"where": [{"field": "type", "op": "eq", "value": "b"}], "aggregate": {"op": "count"}}`)
	opened := 0
	before := e.Run(context.Background(), q, engineInput("name\x00v1", questionFile(30, "a", "b"), &opened))
	require.Contains(t, string(before.Values[0]), `"value":15`)
	after := e.Run(context.Background(), q, engineInput("name\x00v2", questionFile(30, "b"), &opened))
	require.Equal(t, 2, opened)
	require.Contains(t, string(after.Values[0]), `"value":30`, "the new file's answer, not the kept one")

	require.Positive(t, e.Answers.Used())
	e.Answers.Forget("name\x00")
	require.Zero(t, e.Answers.Used())
	e.Run(context.Background(), q, engineInput("name\x00v2", questionFile(30, "b"), &opened))
	require.Equal(t, 3, opened, "forgotten: computed again")
}

// TestEngineKeepsOnlyTrustedWholeAnswers: a query of the model's own, one
// of ours that reads the clock, and a failure are computed every time.
func TestEngineKeepsOnlyTrustedWholeAnswers(t *testing.T) {
	data := questionFile(50, "a")
	e := &Engine{Queries: &QueryCache{}, Answers: NewAnswerCache(DefaultAnswerBytes)}
	for _, req := range []*Request{
		{Query: `length`, Slurp: true},                            // the model's
		{Query: `length, (now|type)`, Slurp: true, Trusted: true}, // the clock
		{Query: `error("no")`, Slurp: true, Trusted: true},        // a failure
	} {
		opened := 0
		for range 2 {
			e.Run(context.Background(), req, engineInput("f", data, &opened))
		}
		require.Equal(t, 2, opened, req.Query)
	}
	require.Zero(t, e.Answers.Used())
}

// TestAnswerCacheBudget: the answers kept take at most the budget, the
// least recently used going first, and an answer larger than half of it
// is not kept.
func TestAnswerCacheBudget(t *testing.T) {
	const budget = 4 << 10
	c := NewAnswerCache(budget)
	answer := func(n int) *Response {
		return &Response{Values: []json.RawMessage{json.RawMessage(`"` + strings.Repeat("x", n) + `"`)}}
	}
	for i := range 50 {
		c.put(fmt.Sprint("k", i), answer(200))
		require.LessOrEqual(t, c.Used(), int64(budget))
	}
	_, ok := c.get("k0")
	require.False(t, ok, "the oldest went first")
	got, ok := c.get("k49")
	require.True(t, ok)
	require.Equal(t, answer(200).Values, got.Values)

	c.put("big", answer(budget/2))
	_, ok = c.get("big")
	require.False(t, ok, "larger than half the budget")
	require.LessOrEqual(t, c.Used(), int64(budget))

	off := NewAnswerCache(0)
	off.put("k", answer(1))
	_, ok = off.get("k")
	require.False(t, ok)
	var none *AnswerCache
	none.put("k", answer(1))
	_, ok = none.get("k")
	require.False(t, ok)
}

// TestEngineGivesTheCacheToAWholeSlurp: a query that slurps whole records
// of a file too large to keep first empties the file cache, so that the
// cache never stands between a heavy query and the worker's memory
// bound; a narrow question keeps what it read.
func TestEngineGivesTheCacheToAWholeSlurp(t *testing.T) {
	small, large := questionFile(20, "a"), questionFile(5000, "a", "b")
	e := &Engine{Files: NewFileCache(64 << 10), Queries: &QueryCache{}}
	require.False(t, e.Files.Fits(int64(len(large))), "the large file is decoded as its query runs")
	opened := 0
	run := func(key string, data []byte, req *Request) *Response {
		t.Helper()
		resp := e.Run(context.Background(), req, engineInput(key, data, &opened))
		require.Nil(t, resp.Failure, req.Query)
		return resp
	}
	run("small", small, &Request{Query: `.id`})
	_, ok := e.Files.Get("small")
	require.True(t, ok)

	q := trustedQuestion(t, `{"where": [{"field": "type", "op": "eq", "value": "b"}], "aggregate": {"op": "count"}}`)
	run("large", large, q)
	_, ok = e.Files.Get("small")
	require.True(t, ok, "a question reads two fields: the cache stays")

	resp := run("large", large, &Request{Query: `map(tostring)|length`, Slurp: true})
	require.Equal(t, "5000", string(resp.Values[0]))
	_, ok = e.Files.Get("small")
	require.False(t, ok, "whole records slurped: the cache was given up")
}
