package lro_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/testenv"
	"github.com/mcplro/lro/mcpgo"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/examples/memoryserver/memserver"
)

// FuzzExtract sends arbitrary queries, recipe numbers and parameters to lro_extract through
// a real client: no panic, no hang, and the server answers the next call.
//
//	go test -run '^$' -fuzz FuzzExtract -fuzztime 60s
func FuzzExtract(f *testing.F) {
	f.Add("", `{"namespace": "_semantic"}`, false, 2.0)
	f.Add("", `{"keyword": "(a+)+$"}`, false, 3.0)
	f.Add("", `{"tag": [1]}`, false, 7.0)
	f.Add("", `{}`, false, 1e19)
	for _, seed := range []struct{ query, params string }{
		{".", `{}`},
		{`select(.namespace | startswith($ns))`, `{"ns": "_semantic"}`},
		{`group_by(.namespace) | map(length)`, `null`},
		{`.title | test($k; "i")`, `{"k": "(a+)+$"}`},
		{`def f: 1+f; f`, `{}`},
		{`[range(1e9)]`, `{}`},
		{`"x" * 100000000`, `{}`},
		{`input`, `{}`},
		{`$__loc__`, `{}`},
		{`[.[]?] | tojson | fromjson`, `{"a": [1, {"b": null}]}`},
		{`ltrimstr(1)`, `{"x": 1e309}`},
		{`@base64d`, `{}`},
		{`getpath(["a",1e9])`, `{}`},
		{`setpath([1e9]; 1)`, `{}`},
		{`env.HOME, $ENV.PATH`, `{}`},
		{`halt_error(1)`, `{}`},
		{`limit(3; repeat(.))`, `[]`},
	} {
		f.Add(seed.query, seed.params, false, 0.0)
		f.Add(seed.query, seed.params, true, 0.0)
	}
	cfg := lro.DefaultConfig()
	cfg.OutputDir = f.TempDir()
	// The seeds that run to the deadline prove as much at half a second;
	// fuzzing, and CI, keep the second.
	timeout := time.Second
	if !testenv.Fuzzing() && !testenv.Full() {
		timeout = 500 * time.Millisecond
	}
	o, err := lro.New(cfg, lro.WithExtractLimits(lro.ExtractLimits{Timeout: timeout, MaxHeapBytes: 128 << 20}))
	if err != nil {
		f.Fatal(err)
	}
	defer o.Close()
	s := memserver.New(testStore, o)
	mcpgo.AddExtractTool(s, o)
	var path string
	f.Fuzz(func(t *testing.T, query, params string, slurp bool, recipe float64) {
		c := connect(t, s)
		if path == "" {
			path = descriptor(t, callTool(t, c, "recall_memories", map[string]any{"query": "cache", "limit": 100})).FilePath
		}
		args := map[string]any{"file_path": path, "query": query, "slurp": slurp}
		if recipe != 0 {
			args = map[string]any{"file_path": path, "recipe": recipe}
		}
		var p any
		if json.Unmarshal([]byte(params), &p) == nil {
			args["params"] = p
		}
		start := time.Now()
		callTool(t, c, "lro_extract", args) // any result, error results included
		if d := time.Since(start); testenv.Hung(d, 5*time.Second) {
			t.Fatalf("query %q took %v", query, d)
		}
		// On a loaded machine the first call after a query stopped at the
		// deadline may meet it too, while a worker starts in the stopped
		// one's place: a timeout is tried again, a few times; anything
		// else, or a server that never answers in time, fails.
		for try := 1; ; try++ {
			res := callTool(t, c, "lro_extract", map[string]any{"file_path": path, "recipe": 1})
			if !res.IsError {
				break
			}
			if text := textOf(t, res, 0); try == 5 || !strings.Contains(text, "took longer than") {
				t.Fatalf("server broken after %q (call %d): %s", query, try, text)
			}
		}
	})
}
