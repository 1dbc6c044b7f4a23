package extractworker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/structq"
)

// BenchmarkEngineQuestion measures a question asked without jq (package
// structq) beside the recipe or query that answers the same, over 100,000
// memories at full detail, in a worker's engine, the two run alternately
// in each iteration so that the load of the machine weighs on both alike:
// first, the file's first question (an empty cache of the default size);
// second, asked again of the records the first kept. It reports
// question/ref, the ratio of their times, and each one's ns/op. The
// question is within 1.2x of its reference when question/ref is at most
// 1.2 (filter-type's recipe counts its matches past its first screenful
// without printing them; filter-type-counted is the query that also
// prints the first 20, as the question does):
//
//	go test -run '^$' -bench EngineQuestion -benchtime 10x ./internal/extractworker
func BenchmarkEngineQuestion(b *testing.B) {
	const n = 100000
	data := memoryLines(b, n)
	for _, bc := range []struct {
		name     string
		ref      *Request
		question string
	}{
		{"count-by-namespace", &Request{Query: `group_by(.namespace)|map({namespace:.[0].namespace,count:length})`, Slurp: true},
			`{"group_by": "namespace", "aggregate": {"op": "count"}}`},
		{"search-title", &Request{Query: `select(.title|test($keyword;"i"))`, Vars: []string{"keyword"}, Values: json.RawMessage(`["quasar"]`)},
			`{"where": [{"field": "title", "op": "contains", "value": "quasar"}]}`},
		{"filter-type", &Request{Query: `select(.memory_type==$type)`, Vars: []string{"type"}, Values: json.RawMessage(`["semantic"]`)},
			`{"where": [{"field": "memory_type", "op": "eq", "value": "semantic"}]}`},
		// The recipe stops at its first screenful; the question counts
		// every match, as this query does.
		{"filter-type-counted", &Request{Query: `map(select(.memory_type==$type))|(length,.[:20])`, Slurp: true, Vars: []string{"type"}, Values: json.RawMessage(`["semantic"]`)},
			`{"where": [{"field": "memory_type", "op": "eq", "value": "semantic"}], "limit": 20}`},
		{"tag", &Request{Query: `select(.tags|index($tag))`, Vars: []string{"tag"}, Values: json.RawMessage(`["TAG"]`)},
			`{"where": [{"field": "tags", "op": "contains", "value": "TAG"}]}`},
		{"sort-created", &Request{Query: `sort_by(.created)`, Slurp: true},
			`{"sort": {"field": "created"}}`},
		{"top-confidence", &Request{Query: `sort_by(.provenance.confidence)|reverse`, Slurp: true},
			`{"sort": {"field": "provenance.confidence", "desc": true}}`},
		{"distinct-namespaces", &Request{Query: `map(.namespace)|unique|length`, Slurp: true},
			`{"aggregate": {"op": "distinct", "field": "namespace"}}`},
		{"sum-confidence", &Request{Query: `map(.provenance.confidence)|add`, Slurp: true},
			`{"aggregate": {"op": "sum", "field": "provenance.confidence"}}`},
	} {
		q := questionRequest(b, bc.question)
		for _, req := range []*Request{bc.ref, q} {
			req.Trusted = true
			req.Limits.MaxOutputBytes = 64 << 10
			req.Limits.Timeout = time.Minute
		}
		for _, first := range []bool{true, false} {
			name := fmt.Sprintf("records=%d/%s/second", n, bc.name)
			if first {
				name = fmt.Sprintf("records=%d/%s/first", n, bc.name)
			}
			b.Run(name, func(b *testing.B) { benchPair(b, data, bc.ref, q, first) })
		}
	}
}

// benchPair runs ref and q over data alternately, each iteration both, and
// reports the ratio of their times (question/ref; question/ref-cpu, of
// the CPU time the process spent, where the system says, which a loaded
// machine disturbs less) and each one's ns/op:
// of a fresh engine each time when first, else of the records each one's
// engine kept.
func benchPair(b *testing.B, data []byte, ref, q *Request, first bool) {
	in := func(key string) Input {
		return Input{Key: key, Size: int64(len(data)), Open: func() (io.Reader, func(), error) {
			return bytes.NewReader(data), func() {}, nil
		}, OpenAt: func() (io.ReaderAt, func(), error) {
			return bytes.NewReader(data), func() {}, nil
		}}
	}
	reqs := [2]*Request{ref, q}
	engines := [2]*Engine{}
	for i := range engines {
		engines[i] = &Engine{Files: NewFileCache(32 << 20), Queries: &QueryCache{}}
	}
	var cpu [2]time.Duration
	run := func(side int, key string) time.Duration {
		e := engines[side]
		if first {
			e = &Engine{Files: NewFileCache(32 << 20), Queries: &QueryCache{}}
		}
		start, startCPU := time.Now(), processCPU()
		if resp := e.Run(context.Background(), reqs[side], in(key)); resp.Failure != nil {
			b.Fatal(resp.Failure)
		}
		cpu[side] += processCPU() - startCPU
		return time.Since(start)
	}
	if !first {
		run(0, "f")
		run(1, "f")
	}
	var spent [2]time.Duration
	i := 0
	for b.Loop() {
		i++
		for k := range 2 {
			side := (i + k) % 2 // each goes first every other iteration
			key := "f"
			if first {
				key = fmt.Sprint(i)
			}
			spent[side] += run(side, key)
		}
	}
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "question/ref")
	if cpu[0] > 0 {
		b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "question/ref-cpu")
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(i), "ref-ns/op")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(i), "question-ns/op")
}

// questionRequest makes the request lro_extract makes of a question.
func questionRequest(b testing.TB, question string) *Request {
	var args map[string]any
	if err := json.Unmarshal([]byte(question), &args); err != nil {
		b.Fatal(err)
	}
	s, err := structq.Parse(args)
	if err != nil {
		b.Fatal(err)
	}
	s.Budget = (64 << 10) * 3 / 4
	values, err := json.Marshal([]any{s.Value()})
	if err != nil {
		b.Fatal(err)
	}
	return &Request{Query: s.Program(), Slurp: true, Vars: []string{structq.Var}, Values: values}
}
