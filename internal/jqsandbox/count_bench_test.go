package jqsandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/memstore"
)

// BenchmarkCount measures first queries of 100,000 full memories read
// from a reader, whose output is full and whose count is exact: list, a
// list (recipe 1), counted from the lines (see onceCheck); select (recipe
// 2), counted by running the filter on the field it reads; lines, the
// list's check alone over every line.
//
//	go test -run '^$' -bench Count -cpuprofile /tmp/count.prof ./internal/jqsandbox
func BenchmarkCount(b *testing.B) {
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
	lim := Limits{MaxOutputBytes: 64 << 10}
	for _, bc := range []struct{ name, query string }{
		{"list", `[.title,.namespace]|@tsv`},
		{"select", `select(.namespace|startswith("_semantic"))`},
	} {
		q, err := Compile(bc.query, nil, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				res, err := q.Run(context.Background(), bytes.NewReader(data), Stream, nil, lim)
				if err != nil || res.Uncounted || !res.Truncated {
					b.Fatal(err, res.Uncounted, res.Truncated)
				}
			}
		})
	}
	q, err := Compile(`[.title,.namespace]|@tsv`, nil, Limits{})
	if err != nil {
		b.Fatal(err)
	}
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
