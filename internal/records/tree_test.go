package records

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcplro/lro/internal/jsonscan"
)

// treeLines is the records of the tree in data, one a line.
func treeLines(t testing.TB, data string) string {
	t.Helper()
	var b strings.Builder
	err := newTreeRecords([]byte(data)).Each(func(_ int, r *Record) bool {
		b.Write(r.Line)
		b.WriteByte('\n')
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The one-pass index finds what a lookup of each node's members found:
// the children after or before the name, elements that are not nodes
// (counted in their siblings' positions), a node's own "path", a name
// that is not a string, escapes, and of several children arrays the last.
func TestTreeRecordsShapes(t *testing.T) {
	for _, c := range []struct{ name, tree, want string }{
		{"children last", `{"name":"a","size":1,"children":[{"name":"b"},{"name":"c","children":[{"name":"d"}]}]}`,
			`{"path":"a","name":"a","size":1}` + "\n" + `{"path":"a/b","name":"b"}` + "\n" + `{"path":"a/c","name":"c"}` + "\n" + `{"path":"a/c/d","name":"d"}` + "\n"},
		{"children first", `[{"children":[{"name":"b"}],"name":"a"}]`,
			`{"path":"a","name":"a"}` + "\n" + `{"path":"a/b","name":"b"}` + "\n"},
		{"not nodes among them", `{"name":"a","children":[1,{"id":7},"x",{"name":"e\"q"}]}`,
			`{"path":"a","name":"a"}` + "\n" + `{"path":"a/1","id":7}` + "\n" + `{"path":"a/e\"q","name":"e\"q"}` + "\n"},
		{"own path, a name not a string", `{ "name" : 5 , "path" : "/x" , "children" : [ { "name" : "b" } ] }`,
			`{"tree_path":"0","name":5,"path":"/x"}` + "\n" + `{"path":"0/b","name":"b"}` + "\n"},
		{"two children arrays", `{"name":"a","children":[{"name":"old","children":[{"name":"older"}]}],"children":[{"name":"new"}],"k":1}`,
			`{"path":"a","name":"a","k":1}` + "\n" + `{"path":"a/new","name":"new"}` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := treeLines(t, c.tree); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// chain is a tree of n nodes each the only child of the one before.
func chain(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"name":"node-%015d","children":[`, i)
	}
	b.WriteString(strings.Repeat("]}", n))
	return []byte(b.String())
}

// BenchmarkTreeRecords: a tree's records, made and walked, against a
// floor that reads its bytes once (validating them), at 625 and 5,000
// deep: the ratio to the floor stays the same as the depth grows.
func BenchmarkTreeRecords(b *testing.B) {
	for _, n := range []int{625, 5000} {
		data := chain(n)
		b.Run(fmt.Sprintf("records/%d-deep", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				t := newTreeRecords(data)
				_ = t.Each(func(int, *Record) bool { return true })
			}
		})
		b.Run(fmt.Sprintf("floor/%d-deep", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if !jsonscan.Valid(data) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
