//go:build unix

package extractworker

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/jqsandbox"
	"github.com/mcplro/lro/internal/testenv"
)

// FuzzWorker sends arbitrary queries, parameters and file bytes across the
// worker boundary: the parent's request, the worker's reading of the file
// by its path, the response frames. Whatever the input, a call answers
// within its deadline (plus the kill's grace), its results stay within
// their bound, the worker pool keeps working, and a worker answers what
// the same Engine answers in this process, unless a bound that depends on
// timing or on the process (time, memory, a busy slot) decided either.
//
//	go test -run '^$' -fuzz FuzzWorker -fuzztime 3m ./internal/extractworker
func FuzzWorker(f *testing.F) {
	file := []byte(`{"type":"lro_header"}` + "\n" + `{"id":1,"t":"a b"}` + "\n" + `{"id":2,"t":"c","n":[1,2.5,null]}` + "\n")
	for _, seed := range []struct {
		query, params string
		slurp         bool
	}{
		{".", `{}`, false},
		{"length", `{}`, true},
		{`select(.id == $n) | .t`, `{"n": 2}`, false},
		{`.t | test($k; "i")`, `{"k": "(a+)+$"}`, false},
		{`error("x" * 100000)`, `{}`, false},
		{`[range(1e9)]`, `{}`, false},
		{`def f: 1+f; f`, `{}`, false},
		{`input`, `{}`, false},
		{`$__loc__`, `{}`, false},
		{`.n[] | tostring`, `{"a": [1, {"b": null}]}`, false},
		{`halt_error`, `{}`, false},
		{`limit(3; repeat(.))`, `[]`, true},
		{`.`, `{"bad name": 1}`, false},
	} {
		f.Add(seed.query, seed.params, file, seed.slurp)
	}
	f.Add(".", `{}`, []byte("{}\n{\n"), false)
	f.Add(".", `{}`, []byte("no header\n[1,2]\n3 4\n"), true)
	f.Add(".", `{}`, []byte{}, false)
	f.Add(".a", `{}`, bytes.Repeat([]byte(`{"a":"b"}`+"\n"), 5000), false)

	p := PoolFor(Config{Workers: 1, MaxWorkers: 1, MemoryBytes: 256 << 20, CacheBytes: 1 << 20})
	local := &Engine{Files: NewFileCache(1 << 20), Queries: &QueryCache{}}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, query, params string, data []byte, slurp bool) {
		if len(query) > 4096 || len(params) > 4096 || len(data) > 1<<20 {
			return
		}
		path := filepath.Join(dir, "f.jsonl")
		os.Remove(path)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fd, id, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		fd.Close()
		req := &Request{Path: path, File: id, Query: query, Slurp: slurp,
			Limits: jqsandbox.Limits{Timeout: 300 * time.Millisecond, MaxHeapBytes: 64 << 20, MaxOutputBytes: 64 << 10}}
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(params), &m) == nil {
			var vals []json.RawMessage
			for k := range m {
				req.Vars = append(req.Vars, k)
			}
			slices.Sort(req.Vars)
			for _, k := range req.Vars {
				vals = append(vals, m[k])
			}
			req.Values, _ = json.Marshal(vals)
		}

		start := time.Now()
		got, err := p.Run(context.Background(), req, req.Limits.Timeout, req.Limits.MaxOutputBytes)
		if took := time.Since(start); testenv.Hung(took, req.Limits.Timeout+killGrace+2*time.Second) {
			t.Fatalf("%q took %v", query, took)
		}
		if err != nil {
			t.Fatalf("%q: %v", query, err)
		}
		n := 0
		for _, v := range got.Values {
			n += len(v)
		}
		if n > req.Limits.MaxOutputBytes+4096 {
			t.Fatalf("%q: %d bytes of results, over the bound", query, n)
		}
		if ok, err := p.Run(context.Background(), &Request{Path: path, File: id, Query: "1", Limits: jqsandbox.Limits{Timeout: 5 * time.Second}}, 5*time.Second, 1<<10); err != nil || ok.Failure != nil && ok.Failure.Kind != KindFile {
			t.Fatalf("the pool is broken after %q: %v %+v", query, err, ok)
		}

		if settledByTiming(got) {
			return // and not run here: it could hold this process's slot
		}
		want := local.Run(context.Background(), req, workerInput(req))
		if settledByTiming(want) {
			return
		}
		if !equalResponses(got, want) {
			t.Fatalf("%q over %q: a worker answered %+v (%s), this process %+v (%s)", query, data, got.Failure, got.Values, want.Failure, want.Values)
		}
	})
}

// settledByTiming reports an answer decided by a bound on time or memory,
// or by another run holding the slot: it may differ between processes.
func settledByTiming(r *Response) bool {
	return r.Failure != nil && (r.Failure.Kind == KindLimit || r.Failure.Kind == KindBusy || r.Failure.Kind == KindInternal)
}

func equalResponses(a, b *Response) bool {
	if (a.Failure == nil) != (b.Failure == nil) || a.Failure != nil && *a.Failure != *b.Failure {
		return false
	}
	if a.Truncated != b.Truncated || !a.Truncated && a.Omitted != b.Omitted {
		return false
	}
	return slices.EqualFunc(a.Values, b.Values, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}
