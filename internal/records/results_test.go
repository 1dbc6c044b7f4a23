package records

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// rowsJSON is an array of n rows.
func rowsJSON(n int) string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf(`{"id":%d,"status":"delivered","amount":"%d.50"}`, i, i)
	}
	return "[" + strings.Join(rows, ",") + "]"
}

// nested wraps rows in depth levels of {"x":[{"x":…}]}, the rows under
// the last: every level is a few objects holding an array of records.
func nested(depth int, rows string) string {
	return strings.Repeat(`{"x":[`, depth) + `{"rows":` + rows + `}` + strings.Repeat(`]}`, depth)
}

// TestSearchReadsBounded: however deep a result nests, the search reads
// at most scanShare times its bytes, and what it finds is records all
// the same.
func TestSearchReadsBounded(t *testing.T) {
	for _, depth := range []int{1, 3, 50, 5000} {
		doc := []byte(nested(depth, rowsJSON(400)))
		l := FindLayout(doc, true, nil, "")
		if len(l.Sections) == 0 {
			t.Fatalf("depth %d: no section", depth)
		}
		if l.scan < 0 {
			t.Fatalf("depth %d: read %d bytes over the bound", depth, -l.scan)
		}
		s := l.Sections[0]
		if depth <= 3 {
			if want := strings.Repeat(".x[0]", depth)[1:] + ".rows"; s.Name() != want || s.Src.Count() != 400 {
				t.Fatalf("depth %d: section %q of %d records, want %q of 400", depth, s.Name(), s.Src.Count(), want)
			}
		}
	}
}

// TestDottedPaths: an element's index is written in brackets; a key
// written with brackets is a key.
func TestDottedPaths(t *testing.T) {
	for _, c := range []struct {
		path []string
		want string
	}{
		{nil, ""},
		{[]string{"data", "items"}, "data.items"},
		{[]string{"data", "statements", indexStep(0), "rows"}, "data.statements[0].rows"},
		{[]string{indexStep(2), "rows"}, "[2].rows"},
		{[]string{"a", indexStep(1), indexStep(3)}, "a[1][3]"},
	} {
		if got := Dotted(c.path); got != c.want {
			t.Errorf("Dotted(%q) = %q, want %q", c.path, got, c.want)
		}
	}
	doc := `{"a[0]":{"rows":` + rowsJSON(50) + `},"b":[{"rows":` + rowsJSON(60) + `}]}`
	l := FindLayout([]byte(doc), true, nil, "")
	var names []string
	for _, s := range l.Sections {
		names = append(names, s.Name())
	}
	if strings.Join(names, " ") != "b[0].rows a[0].rows" {
		t.Fatalf("sections %q", names)
	}
}

// BenchmarkFindLayout compares a result nested 5,000 levels deep with the
// same rows in a plain array, the floor.
func BenchmarkFindLayout(b *testing.B) {
	rows := rowsJSON(20_000)
	for _, c := range []struct {
		name string
		doc  string
	}{
		{"flat", `{"rows":` + rows + `}`},
		{"statements", `{"data":{"statements":[{"sql":"SELECT","rows":` + rows + `}]}}`},
		{"nested5000", nested(5000, rows)},
	} {
		b.Run(c.name, func(b *testing.B) {
			doc := []byte(c.doc)
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				_ = FindLayout(doc, true, nil, "")
			}
		})
	}
}

func TestCheckPath(t *testing.T) {
	for _, p := range []string{"results", "data.items", "data.statements[0].rows", "[0].rows", "a[1][3]", "[2]", "x-y.z_w"} {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", ".a", "a.", "a..b", "a[", "a[]", "a[x]", "a[-1]", "a[0]b", "a.[0]"} {
		if err := CheckPath(p); err == nil {
			t.Errorf("CheckPath(%q) = nil, want an error", p)
		}
	}
}

// A policy's path into a top-level array of records searches the element
// it names only.
func TestWantIntoRootArray(t *testing.T) {
	var els []string
	for i := range 40 {
		els = append(els, fmt.Sprintf(`{"id":%d,"lines":%s}`, i, rowsJSON(5+i)))
	}
	l := FindLayout([]byte("["+strings.Join(els, ",")+"]"), true, nil, "[3].lines")
	if s := l.Sections[0]; s.Name() != "[3].lines" || s.Src.Count() != 8 {
		t.Fatalf("section %q of %d records, want [3].lines of 8", s.Name(), s.Src.Count())
	}
	for _, s := range l.Sections[1:] {
		if s.Name() != "fields" {
			t.Errorf("section %q: the other elements are fields", s.Name())
		}
	}
	kept := make([]int, len(l.Sections))
	kept[0] = 2
	cut := l.Truncated(kept)
	var back []struct {
		ID    int
		Lines []map[string]any
	}
	if err := json.Unmarshal(cut, &back); err != nil {
		t.Fatalf("the fallback %.200s: %v", cut, err)
	}
	// Small elements stay, as small fields do; the large ones, moved to
	// the overflow section, are left out with it.
	three := -1
	for i, e := range back {
		if e.ID == 3 {
			three = i
		}
	}
	if len(back) >= 40 || three < 0 || len(back[three].Lines) != 2 {
		t.Fatalf("the fallback keeps element 3 with 2 lines, and not every element: %.300s", cut)
	}
}
