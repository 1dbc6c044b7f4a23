package jqsandbox

import (
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/require"
)

// deep builds a value nested 100000 levels deep in about 6 MiB: enough to
// overflow Go's 1 GiB stack in the recursive builtins if they were reached.
const deep = `(reduce range(100000) as $i (null; [.]))`

// wide builds 2^60 logical nodes out of 60 arrays by sharing.
const wide = `(reduce range(60) as $i ([1]; [., .]))`

// shared is an array of 100000 references to one 1000-byte string: 1.6 MB
// of heap, 100 MB once concatenated.
const shared = `(("x" * 1000) as $s | [range(100000) | $s])`

var hostile = []struct {
	query string
	want  []error // any of
}{
	// Runaway evaluation: the watchdog or the deadline stops the VM.
	{`def f: 1+f; f`, []error{ErrMemory, ErrTimeout}},
	{`[range(1e9)]`, []error{ErrMemory, ErrTimeout}},
	{`[limit(1e8; repeat("aaaaaaaaaa"))]`, []error{ErrMemory, ErrTimeout}},
	{`reduce range(1e9) as $i ([]; . + [$i])`, []error{ErrMemory, ErrTimeout}},
	{`last(range(1e12))`, []error{ErrTimeout}},
	{`def f: [f]; f`, []error{ErrMemory, ErrTimeout}},
	{`[repeat({a: [range(100)]})]`, []error{ErrMemory, ErrTimeout}},
	// One-shot allocations, refused before they happen.
	{`"x" * 100000000`, []error{ErrMemory}},
	{`"x" * 1e12`, []error{ErrMemory}},
	{`try ("x" * 1e12) catch "caught"`, []error{ErrMemory}},
	{`reduce range(60) as $i ("x"; . + .)`, []error{ErrMemory}},
	{`null | .[100000000] = 1`, []error{ErrMemory}},
	{`{} | .a[1e8] |= 1`, []error{ErrMemory}},
	{`null | setpath([1e8]; 1)`, []error{ErrMemory}},
	{`[1] | .[0] += "x" * 1e9`, []error{ErrMemory}},
	{`[[range(1e5)], (range(1e4) | [])] | transpose`, []error{ErrMemory}},
	{`"x" * 1000000 | [match(""; "g")]`, []error{ErrMemory}},
	{`"x" * 1000000 | gsub(""; "y")`, []error{ErrMemory}},
	{`"x" * 1000000 | explode`, []error{ErrMemory}},
	{`"," * 1000000 | split(",")`, []error{ErrMemory}},
	{shared + ` | add`, []error{ErrMemory}},
	{shared + ` | join(",")`, []error{ErrMemory}},
	{shared + ` | @csv`, []error{ErrMemory}},
	{wide + ` | tojson`, []error{ErrMemory}},
	{wide + ` | "\(.)"`, []error{ErrMemory}},
	{wide + ` | flatten`, []error{ErrTooComplex}},
	{wide + ` | . == .`, []error{ErrTooComplex}},
	{wide + ` | del(.[0])`, []error{ErrTooComplex}},
	{`reduce range(60) as $i ({}; {a: ., b: .}) | . * .`, []error{ErrTooComplex}},
	// Deep recursion in Go, refused before it starts.
	{deep, []error{ErrTooComplex}},
	{deep + ` | tojson`, []error{ErrTooComplex}},
	{deep + ` | @json "\(.)"`, []error{ErrTooComplex}},
	{deep + ` | . == .`, []error{ErrTooComplex}},
	{deep + ` | [., .] | sort`, []error{ErrTooComplex}},
	{deep + ` | [., .] | group_by(.)`, []error{ErrTooComplex}},
	{deep + ` | flatten`, []error{ErrTooComplex}},
	{deep + ` | del(.[0])`, []error{ErrTooComplex}},
	{deep + ` | .[0] |= empty`, []error{ErrTooComplex}},
	{deep + ` | map_values(empty)`, []error{ErrTooComplex}},
	{deep + ` | . as $d | [$d] - [$d]`, []error{ErrTooComplex}},
	{deep + ` | . as $d | [$d] | contains([$d])`, []error{ErrTooComplex}},
	{deep + ` | . as $d | [$d] | index([$d])`, []error{ErrTooComplex}},
	{deep + ` | . as $d | [$d] | .[[$d]]`, []error{ErrTooComplex}},
	{deep + ` | . as $d | [$d] | getpath([[$d]])`, []error{ErrTooComplex}},
	{deep + ` | . as $d | [$d] | IN([$d])`, []error{ErrTooComplex}},
	{`reduce range(100000) as $i (null; {a: .}) | . * .`, []error{ErrTooComplex}},
	{`{} | setpath([range(20000) | "a"]; 1)`, []error{ErrTooComplex}},
	// Superlinear CPU in a single builtin call.
	{`[range(1e5)] | . - .`, []error{ErrTooComplex}},
	{`[range(1e5)] as $a | $a | contains($a)`, []error{ErrTooComplex}},
	{`[range(1e5)] | indices([range(1e4)])`, []error{ErrTooComplex}},
	{`"a" * 100000 | indices("a" * 10000)`, []error{ErrTooComplex}},
	{`[range(1e5)] | .[[range(2e4)]]`, []error{ErrTooComplex}},
	{`"1" * 100000 | tonumber`, []error{ErrTooComplex}},
	{`reduce range(30) as $i (3; . * .)`, []error{ErrTooComplex}},
	{`now | strftime("%1000Y" * 1000)`, []error{ErrTooComplex}},
	{`[range(2000) | tostring | test(.)] | length`, []error{ErrTooComplex}},
	{`"a" | test("[a-z]{1000}" * 1000)`, []error{ErrMemory}},
}

// toDeadline are the hostile queries that run to their deadline, no other
// bound stopping them first: a short deadline proves that the VM stops
// there as well as a long one, which the others keep so that their own
// bound, not the deadline, stops them on a loaded machine too.
var toDeadline = map[string]bool{
	`[limit(1e8; repeat("aaaaaaaaaa"))]`:     true, // the watchdog, late: up to a second
	`reduce range(1e9) as $i ([]; . + [$i])`: true,
	`last(range(1e12))`:                      true,
}

// Every hostile query ends with the expected error class within a few
// seconds (asserted with LRO_TEST_TIMING), the next query works, and the
// heap goes back to its baseline. A query that a bound of its own must
// stop has a deadline no loaded machine reaches, so that the test sees
// that bound stop it, not the deadline; a runaway one, which the
// deadline may stop, has 1.5 s.
func TestHostile(t *testing.T) {
	const within = 1500 * time.Millisecond // each query, with LRO_TEST_TIMING
	runtime.GC()
	base := heapBytes()
	for _, tt := range hostile {
		lim := testLimits()
		lim.Timeout = time.Minute
		if slices.Contains(tt.want, ErrTimeout) {
			lim.Timeout, lim.MaxHeapBytes = within, runawayHeap
		}
		if toDeadline[tt.query] {
			lim.Timeout = 300 * time.Millisecond
		}
		start := time.Now()
		res, err := run(t, tt.query, `null`, Stream, lim, nil)
		elapsed := time.Since(start)
		t.Logf("%-60.60s %6dms %v", tt.query, elapsed.Milliseconds(), err)
		require.True(t, isAny(err, tt.want...), "%s: got %v, want one of %v", tt.query, err, tt.want)
		require.Empty(t, res.Values)
		testenv.Within(t, elapsed, min(lim.Timeout, within)+time.Second, tt.query)

		res, err = run(t, `map(.id) | length`, sampleJSONL, Slurp, lim, nil)
		require.NoError(t, err, "after %s", tt.query)
		require.Equal(t, []string{"8"}, strs(res.Values))
	}
	runtime.GC()
	runtime.GC()
	after := heapBytes()
	t.Logf("heap objects: %s before, %s after", human(float64(base)), human(float64(after)))
	require.Less(t, after, base+16<<20, "heap back near its baseline")
}

// With the default limits, one-shot allocations are refused just the same.
func TestHostileDefaultLimits(t *testing.T) {
	for _, q := range []string{`"x" * 100000000`, `"x" * 1e12`, `[.[]?] | .[1e9] = 1`} {
		_, err := run(t, q, `null`, Stream, Limits{}, nil)
		require.ErrorIs(t, err, ErrMemory, q)
	}
}

// A Query that hit a limit stays usable.
func TestQueryReusableAfterLimit(t *testing.T) {
	lim := testLimits()
	lim.Timeout = 200 * time.Millisecond
	q, err := Compile(`if . == 0 then last(range(1e12)) else . * 2 end`, nil, lim)
	require.NoError(t, err)
	_, err = q.Run(t.Context(), stringsReader("0"), Stream, nil, lim)
	require.ErrorIs(t, err, ErrTimeout)
	res, err := q.Run(t.Context(), stringsReader("21"), Stream, nil, lim)
	require.NoError(t, err)
	require.Equal(t, []string{"42"}, strs(res.Values))
}

func isAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
