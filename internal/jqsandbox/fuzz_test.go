package jqsandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
)

// FuzzRun checks that no query panics, hangs or escapes the limits. Every
// run has a 300 ms timeout (seeds such as the repeat run to it) and a
// 16 MiB heap budget, which the runaway seeds reach in a fraction of it;
// go test runs the seeds.
func FuzzRun(f *testing.F) {
	seeds := []string{
		`.`, `.id`, `{id, title}`, `select(.title | test("cach"; "i"))`,
		`group_by(.namespace) | map({namespace: .[0].namespace, count: length})`,
		`[.title, .namespace] | @tsv`, `sort_by(.created) | .[0]`, `paths`, `..`,
		`to_entries`, `tostream`, `[splits(" ")]?`, `.title | sub("a"; "b"; "g")`,
		`env`, `$__loc__`, `input`, `import "x" as x; .`, `@sh "echo \(.)"`,
		`def f: 1+f; f`, `[range(1e9)]`, `"x" * 100000000`, `"x" * 1e12`,
		`[limit(1e8; repeat("aaaaaaaaaa"))]`, `reduce range(60) as $i ([1]; [., .]) | tojson`,
		`reduce range(100000) as $i (null; [.]) | . == .`, `null | .[1e8] = 1`,
		`halt_error`, `error({a: 1})`, `try error catch .`, `.[] |= empty`,
		`limit(3; repeat(.))`, `[.[]?] | transpose`, `fromjson?`, `tojson | fromjson`,
	}
	for i, s := range seeds {
		f.Add(s, i%2 == 0)
	}
	lim := Limits{Timeout: 300 * time.Millisecond, MaxHeapBytes: runawayHeap, MaxOutputs: 100, MaxOutputBytes: 64 << 10}
	f.Fuzz(func(t *testing.T, query string, slurp bool) {
		q, err := Compile(query, nil, lim)
		if err != nil {
			var qe *QueryError
			if !errors.As(err, &qe) && !errors.Is(err, ErrQueryTooLong) {
				t.Fatalf("compile %q: unexpected error %T %v", query, err, err)
			}
			return
		}
		mode := Stream
		if slurp {
			mode = Slurp
		}
		start := time.Now()
		_, err = q.Run(context.Background(), strings.NewReader(sampleJSONL), mode, nil, lim)
		if d := time.Since(start); testenv.Hung(d, lim.Timeout+abandonAfter) {
			t.Fatalf("run %q took %v", query, d)
		}
		if err == nil {
			return
		}
		var qe *QueryError
		var he *HaltError
		switch {
		case strings.Contains(err.Error(), "internal error"), strings.Contains(err.Error(), "keeps the sandbox busy"),
			errors.Is(err, ErrBusy):
			t.Fatalf("run %q: %v", query, err)
		case errors.As(err, &qe), errors.As(err, &he), isAny(err, ErrTimeout, ErrMemory, ErrTooComplex):
		default:
			t.Fatalf("run %q: unexpected error %T %v", query, err, err)
		}
	})
}
