package extractworker

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/structq"
)

// BenchmarkEngineQuestion measures a question asked without jq (package
// structq) beside the recipe or query that answers the same, over 100,000
// memories at full detail, in a worker's engine: first, the file's first
// question (a cache of the default size, empty); second, asked again of
// the records the first kept. The question is within 1.2x of its
// reference when question/reference is, for each pair and each of first
// and second (filter-type's recipe stops at its first screenful of
// records, where the question counts every match: filter-type-counted is
// the query that does what the question does):
//
//	go test -run '^$' -bench EngineQuestion -benchtime 5x ./internal/extractworker
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
		for _, side := range []string{"reference", "question"} {
			req := bc.ref
			if side == "question" {
				req = questionRequest(b, bc.question)
			}
			req.Trusted = true
			req.Limits.MaxOutputBytes = 64 << 10
			req.Limits.Timeout = time.Minute
			benchEngine(b, data, req, fmt.Sprintf("records=%d/%s/%s/", n, bc.name, side), false)
		}
	}
}

// questionRequest makes the request lro_extract makes of a question.
func questionRequest(b *testing.B, question string) *Request {
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
