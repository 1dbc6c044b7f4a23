package jqsandbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sampleJSONL looks like an offloaded tool result (without its header line):
// strings, floats, ints, RFC 3339 dates, missing and null fields, unicode.
const sampleJSONL = `{"id":"m-001","title":"Cache invalidation strategy","namespace":"_semantic/architecture","tags":["performance","caching"],"created":"2024-05-01T10:00:00Z","provenance":{"source":"chat","confidence":0.85},"size":1200}
{"id":"m-002","title":"Security review: auth tokens","namespace":"_semantic/security","tags":["security","auth"],"created":"2024-03-12T08:30:00Z","provenance":{"source":"doc","confidence":0.92},"size":530}
{"id":"m-003","title":"Caching layer for the API","namespace":"_episodic/2024","tags":["caching"],"created":"2024-06-20T16:45:10Z","provenance":{"source":"chat","confidence":0.61},"size":87}

{"id":"m-004","title":"Deploy checklist","namespace":"_procedural/ops","tags":[],"created":"2023-11-02T09:00:00Z","provenance":{"source":"runbook","confidence":0.5},"size":0}
{"id":"m-005","title":"Security incident – token leak","namespace":"_semantic/security","tags":["security","incident"],"created":"2024-07-01T00:00:00Z","provenance":{"source":"ticket","confidence":0.97},"size":4096}
{"id":"m-006","title":"Team offsite notes","namespace":"_episodic/2023","tags":null,"created":"2023-09-15T12:00:00Z","provenance":{"source":"chat","confidence":0.33},"size":12}
{"id":"m-007","title":"CDN cache headers","namespace":"_semantic/architecture","created":"2024-01-05T07:20:00Z","provenance":{"source":"doc","confidence":0.78},"size":640}
{"id":"m-008","title":"Ünïcödé title with \"quotes\"\tand tab","namespace":"_semantic/misc","tags":["misc","security"],"created":"2022-12-31T23:59:59Z","provenance":{"source":"import","confidence":0.125},"size":1e3}
`

// testLimits are small enough for hostile queries to fail fast under -race
// on two cores.
func testLimits() Limits {
	return Limits{Timeout: 2 * time.Second, MaxHeapBytes: 64 << 20}
}

// runawayHeap is the heap budget of runaway queries (those the deadline
// may stop): the watchdog stops them at a quarter of testLimits' budget as
// surely, and four times sooner.
const runawayHeap = 16 << 20

// run compiles and runs query over input.
func run(t testing.TB, query, input string, mode Mode, lim Limits, names []string, vars ...any) (Result, error) {
	t.Helper()
	q, err := Compile(query, names, lim)
	require.NoError(t, err, "compile %s", query)
	return q.Run(context.Background(), strings.NewReader(input), mode, vars, lim)
}

// decodeResults parses each result.
func decodeResults(t testing.TB, vs []json.RawMessage) []any {
	t.Helper()
	out := make([]any, 0, len(vs))
	for _, v := range vs {
		var x any
		require.NoError(t, json.Unmarshal(v, &x), "result %s", v)
		out = append(out, x)
	}
	return out
}

// strs returns the results as strings.
func strs(vs []json.RawMessage) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
