package jqsandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/memstore"
)

// BenchmarkSkim measures a list's first query of 100,000 full memories
// read from a reader, whose count, once its output is full, is skimmed
// from the lines (see onceCheck): run, the whole run; lines, the check
// alone over every line.
//
//	go test -run '^$' -bench Skim -cpuprofile /tmp/skim.prof ./internal/jqsandbox
func BenchmarkSkim(b *testing.B) {
	var buf bytes.Buffer
	for _, m := range memstore.Generate(100000, 42) {
		v, err := memstore.Project(&m, "full")
		if err != nil {
			b.Fatal(err)
		}
		line, _ := json.Marshal(v)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	data := buf.Bytes()
	q, err := Compile(`[.title,.namespace]|@tsv`, nil, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	lim := Limits{MaxOutputBytes: 64 << 10}
	b.Run("run", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			res, err := q.Run(context.Background(), bytes.NewReader(data), Stream, nil, lim)
			if err != nil || res.Uncounted || len(res.Values)+res.Omitted != 100000 {
				b.Fatal(err, res.Uncounted, len(res.Values)+res.Omitted)
			}
		}
	})
	b.Run("lines", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			rest := data
			var fields []jsonscan.Field
			for len(rest) > 0 {
				i := bytes.IndexByte(rest, '\n')
				var ok bool
				if ok, fields = q.once.passes(rest[:i], fields); !ok {
					b.Fatal("a memory fails")
				}
				rest = rest[i+1:]
			}
		}
	})
}
