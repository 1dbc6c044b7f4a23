package jqsandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/require"
)

func TestEnvironmentIsEmpty(t *testing.T) {
	t.Setenv("JQSANDBOX_SECRET", "hunter2")
	res, err := run(t, `env, $ENV, env.JQSANDBOX_SECRET, $ENV.HOME`, `{}`, Stream, testLimits(), nil)
	require.NoError(t, err)
	require.Equal(t, []string{`{}`, `{}`, `null`, `null`}, strs(res.Values))
}

func TestRejectedAtCompile(t *testing.T) {
	tests := map[string]string{
		`input`:                   "input is not available",
		`[inputs]`:                "inputs is not available",
		`first(inputs)`:           "inputs is not available",
		`import "a" as a; .`:      "modules are disabled",
		`include "a"; .`:          "modules are disabled",
		`import "a" as $a; $a`:    "modules are disabled",
		`module {a: 1}; .`:        "modules are disabled",
		`modulemeta`:              "modulemeta is not available",
		`_index(.; 0)`:            "internal function _index/2",
		`_multiply("x"; 1e9)`:     "internal function _multiply/2",
		`def _sbx_x: 1; 1`:        `reserved: _sbx_x`,
		`_sbx_orig_tojson`:        `reserved`,
		`def f(_sbx_g): 1; f(.)`:  `reserved`,
		`.a | `:                   "parse error at line 1, column 6: unexpected EOF",
		".a |\n  {b: }":           "parse error at line 2, column 7",
		`nosuchfunction(1)`:       "function not defined: nosuchfunction/1",
		`$nosuchvar`:              "variable not defined: $nosuchvar",
		`input_line_number`:       "function not defined",
		`def input: 1; input + 1`: "", // user definitions shadow the builtin
	}
	for query, want := range tests {
		t.Run(query, func(t *testing.T) {
			_, err := Compile(query, nil, Limits{})
			if want == "" {
				require.NoError(t, err)
				return
			}
			var qe *QueryError
			require.ErrorAs(t, err, &qe)
			require.Contains(t, err.Error(), want)
		})
	}

	var qe *QueryError
	_, err := Compile(".a |\n  {b: }", nil, Limits{})
	require.ErrorAs(t, err, &qe)
	require.Equal(t, 2, qe.Line)

	_, err = Compile(strings.Repeat(" ", 5000)+".", nil, Limits{})
	require.ErrorIs(t, err, ErrQueryTooLong)
	_, err = Compile(strings.Repeat("[", 2500)+strings.Repeat("]", 2500), nil, Limits{MaxQueryBytes: 1 << 20})
	require.ErrorIs(t, err, ErrQueryTooLong)
	_, err = Compile(`$x`, []string{"x", "x"}, Limits{})
	require.Error(t, err)
}

// Nothing may reach the process's stdout or stderr, which carry the MCP
// transport.
func TestNoStdio(t *testing.T) {
	stdout, stderr := os.Stdout, os.Stderr
	r, w, err := os.Pipe()
	require.NoError(t, err)
	os.Stdout, os.Stderr = w, w
	res, runErr := run(t, `debug, stderr, debug("msg"), (input_filename | debug)`, `{"a":1}`, Stream, testLimits(), nil)
	os.Stdout, os.Stderr = stdout, stderr
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Empty(t, string(out))
	require.NoError(t, runErr)
	require.Equal(t, []string{`{"a":1}`, `{"a":1}`, `{"a":1}`, `null`}, strs(res.Values))
}

func TestHalt(t *testing.T) {
	in := "1\n2\n3\n"
	res, err := run(t, `., if . == 2 then halt else empty end`, in, Stream, testLimits(), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2"}, strs(res.Values))

	res, err = run(t, `., if . == 2 then "bye" | halt_error(3) else empty end`, in, Stream, testLimits(), nil)
	var he *HaltError
	require.ErrorAs(t, err, &he)
	require.Equal(t, 3, he.Code)
	require.Equal(t, 2, he.Record)
	require.Equal(t, "bye", he.Message())
	require.Equal(t, []string{"1", "2"}, strs(res.Values))

	_, err = run(t, `{a: 1} | halt_error`, in, Slurp, testLimits(), nil)
	require.ErrorAs(t, err, &he)
	require.Equal(t, 5, he.Code)
	require.JSONEq(t, `{"a":1}`, string(he.Value))
}

func TestRuntimeErrors(t *testing.T) {
	in := "{\"a\":1}\n\n{\"a\":\"x\"}\n{\"a\":3}\n"
	res, err := run(t, `.a + 1`, in, Stream, testLimits(), nil)
	var qe *QueryError
	require.ErrorAs(t, err, &qe)
	require.Equal(t, 3, qe.Record, "line of the failing record")
	require.Contains(t, qe.Message, "cannot add")
	require.Equal(t, []string{"2"}, strs(res.Values), "results before the error are kept")

	_, err = run(t, `error({a: 1})`, in, Stream, testLimits(), nil)
	require.ErrorAs(t, err, &qe)
	require.JSONEq(t, `{"a":1}`, string(qe.Value))

	res, err = run(t, `try error("x") catch ., (.a | tostring)`, in, Stream, testLimits(), nil)
	require.NoError(t, err)
	require.Equal(t, []string{`"x"`, `"1"`, `"x"`, `"x"`, `"x"`, `"3"`}, strs(res.Values))

	_, err = run(t, `.`, "{\"a\":1}\n{oops\n", Stream, testLimits(), nil)
	require.ErrorIs(t, err, ErrInvalidInput)
	require.Contains(t, err.Error(), "line 2")
}

func TestInput(t *testing.T) {
	// A header line, blank lines, CRLF, several values on a line, no final
	// newline.
	in := "{\"type\":\"lro_header\",\"v\":1}\r\n\r\n{\"a\":1}\r\n \n{\"a\":2} {\"a\":3}\n4"
	res, err := run(t, `.`, in, Slurp, testLimits(), nil)
	require.NoError(t, err)
	require.Equal(t, []string{`[{"a":1},{"a":2},{"a":3},4]`}, strs(res.Values))

	// Numbers beyond float64 print as jq 1.6 prints them.
	res, err = run(t, `.`, `{"a":1e400,"b":-1e400,"c":12345678901234567890}`, Stream, testLimits(), nil)
	require.NoError(t, err)
	require.Equal(t, []string{`{"a":1.7976931348623157e+308,"b":-1.7976931348623157e+308,"c":12345678901234567000}`}, strs(res.Values))

	res, err = run(t, `.`, "", Slurp, testLimits(), nil)
	require.NoError(t, err)
	require.Equal(t, []string{`[]`}, strs(res.Values))

	lim := testLimits()
	lim.MaxInputBytes = 100
	_, err = run(t, `.`, strings.Repeat("{\"a\":1}\n", 20), Stream, lim, nil)
	require.ErrorIs(t, err, ErrInputTooLarge)
	res, err = run(t, `.`, strings.Repeat("{\"a\":1}\n", 12)+"1", Stream, lim, nil)
	require.NoError(t, err, "exactly 100 bytes")
	require.Len(t, res.Values, 13)

	lim = testLimits()
	lim.MaxHeapBytes = 1 << 20 // lines up to 32 KiB
	_, err = run(t, `length`, `"`+strings.Repeat("x", 40<<10)+`"`, Stream, lim, nil)
	require.ErrorIs(t, err, ErrInputTooLarge)
}

func TestOutputCaps(t *testing.T) {
	lim := testLimits()
	lim.MaxOutputs = 3
	res, err := run(t, `.id`, sampleJSONL, Stream, lim, nil)
	require.NoError(t, err)
	require.Equal(t, []string{`"m-001"`, `"m-002"`, `"m-003"`}, strs(res.Values))
	require.True(t, res.Truncated)
	require.Equal(t, 5, res.Omitted)

	lim = testLimits()
	lim.MaxOutputBytes = 20
	res, err = run(t, `.id`, sampleJSONL, Stream, lim, nil)
	require.NoError(t, err)
	require.Equal(t, []string{`"m-001"`, `"m-002"`}, strs(res.Values))
	require.True(t, res.Truncated)
	require.Equal(t, 6, res.Omitted)

	res, err = run(t, `"x" * 1000`, `null`, Stream, lim, nil)
	require.NoError(t, err)
	require.Empty(t, res.Values)
	require.True(t, res.Truncated)
}

func TestOutputKeepsTheElementsThatFit(t *testing.T) {
	// An array result larger than the output keeps the elements that fit,
	// and says how many it had.
	lim := testLimits()
	lim.MaxOutputBytes = 20
	res, err := run(t, `[range(1000)]`, `null`, Stream, lim, nil)
	require.NoError(t, err)
	require.Equal(t, []string{`[0,1,2,3,4,5,6,7,8]`}, strs(res.Values))
	require.True(t, res.Truncated)
	require.Equal(t, 1000, res.Elements)
	require.Zero(t, res.Omitted)

	// After results that fit; those that follow are counted.
	res, err = run(t, `1, [range(1000)], 2, 3`, `null`, Stream, lim, nil)
	require.NoError(t, err)
	require.Equal(t, []string{`1`, `[0,1,2,3,4,5,6,7,8]`}, strs(res.Values)) // 20 bytes
	require.Equal(t, 1000, res.Elements)
	require.Equal(t, 2, res.Omitted)

	// An array whose first element does not fit is omitted, as any result.
	res, err = run(t, `[("x" * 100)]`, `null`, Stream, lim, nil)
	require.NoError(t, err)
	require.Empty(t, res.Values)
	require.Zero(t, res.Elements)
	require.Equal(t, 1, res.Omitted)

	// Slurped, sorted records: the first that fit, encoded as jq would.
	lim = testLimits()
	lim.MaxOutputBytes = 500
	res, err = run(t, `sort_by(.created)`, sampleJSONL, Slurp, lim, nil)
	require.NoError(t, err)
	require.Len(t, res.Values, 1)
	require.Equal(t, 8, res.Elements)
	all, err := run(t, `sort_by(.created)`, sampleJSONL, Slurp, testLimits(), nil)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(all.Values[0]), strings.TrimSuffix(string(res.Values[0]), "]")))
	require.LessOrEqual(t, len(res.Values[0]), 500)
}

func TestFullOutputCountsTheRest(t *testing.T) {
	// A stream over a file goes on reading once the output is full, only
	// to count the rest: the count is exact, from a file or from records
	// in memory.
	input := benchJSONL(20000)
	lim := testLimits()
	lim.MaxOutputs = 3
	q, err := Compile(`.id`, nil, lim)
	require.NoError(t, err)
	res, err := q.Run(context.Background(), strings.NewReader(input), Stream, nil, lim)
	require.NoError(t, err)
	require.Len(t, res.Values, 3)
	require.True(t, res.Truncated)
	require.False(t, res.Uncounted)
	require.Equal(t, 20000-3, res.Omitted)

	recs, err := DecodeRecords(strings.NewReader(benchJSONL(200)), lim)
	require.NoError(t, err)
	res, err = q.RunRecords(context.Background(), recs, Stream, nil, lim)
	require.NoError(t, err)
	require.True(t, res.Truncated)
	require.Equal(t, 197, res.Omitted)
}

func TestTimeout(t *testing.T) {
	lim := testLimits()
	lim.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := run(t, `last(range(1e12))`, `null`, Stream, lim, nil)
	require.ErrorIs(t, err, ErrTimeout)
	testenv.Within(t, time.Since(start), 2*time.Second, "a query past its timeout")

	ctx, cancel := context.WithCancel(context.Background())
	q, err := Compile(`last(range(1e12))`, nil, lim)
	require.NoError(t, err)
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = q.Run(ctx, strings.NewReader("null"), Stream, nil, testLimits())
	require.ErrorIs(t, err, context.Canceled)
}

// blockingReader blocks until release is closed, like a stuck pipe.
type blockingReader struct{ release chan struct{} }

func (b blockingReader) Read([]byte) (int, error) {
	<-b.release
	return 0, io.EOF
}

// An evaluation that cannot be interrupted (here: blocked reading the input)
// does not block Run past its deadline, but keeps the sandbox busy until it
// ends instead of letting work pile up.
func TestStuckEvaluation(t *testing.T) {
	defer func(d time.Duration) { abandonAfter = d }(abandonAfter)
	abandonAfter = 200 * time.Millisecond
	lim := testLimits()
	lim.Timeout = 100 * time.Millisecond
	q, err := Compile(`.`, nil, lim)
	require.NoError(t, err)
	br := blockingReader{make(chan struct{})}
	start := time.Now()
	_, err = q.Run(context.Background(), br, Stream, nil, lim)
	require.ErrorIs(t, err, ErrTimeout)
	require.Contains(t, err.Error(), "keeps the sandbox busy")
	testenv.Within(t, time.Since(start), lim.Timeout+abandonAfter+time.Second, "a stuck evaluation abandoned")

	_, err = q.Run(context.Background(), strings.NewReader("1"), Stream, nil, lim)
	require.ErrorIs(t, err, ErrBusy)

	close(br.release)
	require.Eventually(t, func() bool {
		res, err := q.Run(context.Background(), strings.NewReader("1"), Stream, nil, lim)
		return err == nil && len(res.Values) == 1
	}, 5*time.Second, 10*time.Millisecond)
}

func TestVariables(t *testing.T) {
	q, err := Compile(`[$a, $b, $c]`, []string{"a", "b", "c"}, Limits{})
	require.NoError(t, err)
	res, err := q.Run(context.Background(), strings.NewReader("null"), Stream,
		[]any{int64(7), map[string]int{"x": 1}, []string{"y"}}, Limits{})
	require.NoError(t, err)
	require.Equal(t, []string{`[7,{"x":1},["y"]]`}, strs(res.Values))

	_, err = q.Run(context.Background(), strings.NewReader("null"), Stream, []any{1}, Limits{})
	require.Error(t, err)
	_, err = q.Run(context.Background(), strings.NewReader("null"), Stream, []any{1, 2, make(chan int)}, Limits{})
	require.Error(t, err)
}

func TestConcurrentRunsAreSerialized(t *testing.T) {
	q, err := Compile(`[range(20000)] | length`, nil, Limits{})
	require.NoError(t, err)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			res, err := q.Run(context.Background(), strings.NewReader("null"), Stream, nil, testLimits())
			if err == nil && (len(res.Values) != 1 || string(res.Values[0]) != "20000") {
				err = errors.New("wrong result")
			}
			errs <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
}
