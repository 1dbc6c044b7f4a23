package jqsandbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchJSONL returns n records like sampleJSONL's.
func benchJSONL(n int) string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(sampleJSONL, "\n\n", "\n")), "\n")
	var b strings.Builder
	for i := range n {
		l := lines[i%len(lines)]
		b.WriteString(strings.Replace(l, `"id":"m-00`, fmt.Sprintf(`"id":"r%d-m-00`, i), 1))
		b.WriteByte('\n')
	}
	return b.String()
}

func BenchmarkRun(b *testing.B) {
	data := benchJSONL(500)
	for _, bc := range []struct {
		name, query string
		mode        Mode
	}{
		{"stream-select", `select(.title | test("cach"; "i")) | {id, title, namespace}`, Stream},
		{"slurp-group_by", `group_by(.namespace) | map({namespace: .[0].namespace, count: length})`, Slurp},
	} {
		b.Run(bc.name, func(b *testing.B) {
			q, err := Compile(bc.query, nil, Limits{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				res, err := q.Run(context.Background(), strings.NewReader(data), bc.mode, nil, Limits{})
				if err != nil || len(res.Values) == 0 {
					b.Fatal(err, len(res.Values))
				}
			}
		})
	}
}
