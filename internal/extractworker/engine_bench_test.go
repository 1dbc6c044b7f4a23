package extractworker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/mcplro/lro/internal/memstore"
)

// memoryLines returns n generated memories at full detail, one JSON
// object a line, as an offloaded file holds them after its header.
func memoryLines(b *testing.B, n int) []byte {
	var buf bytes.Buffer
	for _, m := range memstore.Generate(n, 42) {
		v, err := memstore.Project(&m, "full")
		if err != nil {
			b.Fatal(err)
		}
		line, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// BenchmarkEngineQuery measures what a worker does for one lro_extract
// query of 500, 20,000 or 100,000 memories, some of the recipes' filters (3, 7
// and 10 match no record) and a custom select: first, the file's first query
// (a cache of the default size, empty); stream, at 500, the query with no
// cache, reading the file as it decodes it; second, the same query of the
// records the first cached, if it could keep them. first/second is what a
// first query pays for decoding.
//
//	go test -run '^$' -bench EngineQuery ./internal/extractworker
func BenchmarkEngineQuery(b *testing.B) {
	for _, n := range []int{500, 20000, 100000} {
		data := memoryLines(b, n)
		for _, bc := range []struct {
			name, query string
			slurp       bool
			vars        []string
			values      string
		}{
			{"recipe=1", `[.title,.namespace]|@tsv`, false, nil, ""},
			{"recipe=3", `select(.title|test($keyword;"i"))`, false, []string{"keyword"}, `["quasar"]`},
			{"recipe=6", `group_by(.namespace)|map({namespace:.[0].namespace,count:length})`, true, nil, ""},
			{"recipe=7", `select(.tags|index($tag))`, false, []string{"tag"}, `["TAG"]`},
			{"recipe=8", `sort_by(.created)`, true, nil, ""},
			{"recipe=9", `sort_by(.provenance.confidence)|reverse`, true, nil, ""},
			{"recipe=10", `select(.content|test($keyword;"i"))`, false, []string{"keyword"}, `["quasar"]`},
			{"custom-select", `select(.title|test("quasar";"i"))|{id,title}`, false, nil, ""},
		} {
			req := &Request{Query: bc.query, Trusted: bc.name != "custom-select", Vars: bc.vars, Values: json.RawMessage(bc.values), Slurp: bc.slurp}
			req.Limits.MaxOutputBytes = 64 << 10
			req.Limits.Timeout = time.Minute
			benchEngine(b, data, req, fmt.Sprintf("records=%d/%s/", n, bc.name), n == 500)
		}
	}
}

// benchEngine runs req over data (the lines of a file) as sub-benchmarks:
// prefix+"first", the file's first query (an empty cache of the default
// size each time); prefix+"stream" when stream is set, the query with no
// cache, reading the file as it decodes it; prefix+"second", the same
// query of the records the first cached, if it could keep them.
func benchEngine(b *testing.B, data []byte, req *Request, prefix string, stream bool) {
	in := func(key string) Input {
		return Input{Key: key, Size: int64(len(data)), Open: func() (io.Reader, func(), error) {
			return bytes.NewReader(data), func() {}, nil
		}, OpenAt: func() (io.ReaderAt, func(), error) {
			return bytes.NewReader(data), func() {}, nil
		}}
	}
	run := func(b *testing.B, e *Engine, key string) {
		if resp := e.Run(context.Background(), req, in(key)); resp.Failure != nil {
			b.Fatal(resp.Failure)
		}
	}
	b.Run(prefix+"first", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			run(b, &Engine{Files: NewFileCache(32 << 20), Queries: &QueryCache{}}, fmt.Sprint(i))
		}
	})
	if stream {
		b.Run(prefix+"stream", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				run(b, &Engine{Queries: &QueryCache{}}, "f")
			}
		})
	}
	b.Run(prefix+"second", func(b *testing.B) {
		e := &Engine{Files: NewFileCache(32 << 20), Queries: &QueryCache{}}
		run(b, e, "f")
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			run(b, e, "f")
		}
	})
}
