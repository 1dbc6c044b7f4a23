package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestElements(t *testing.T) {
	els, err := Elements([]byte(` [ {"a":"]\"}"}, [1,[2]] , "x\\" ,3.5e2,true,null ] `))
	require.NoError(t, err)
	var got []string
	for _, e := range els {
		got = append(got, string(e))
	}
	assert.Equal(t, []string{`{"a":"]\"}"}`, `[1,[2]]`, `"x\\"`, `3.5e2`, `true`, `null`}, got)

	els, err = Elements([]byte(`[]`))
	require.NoError(t, err)
	assert.Empty(t, els)
	_, err = Elements([]byte(`{"a":1}`))
	assert.ErrorIs(t, err, ErrNotArray)
}

func TestFieldsAndLookup(t *testing.T) {
	obj := []byte(`{"id":"m1", "nested":{"namespace":"no"},"namespace" : "_semantic/x","n":[1,{"k":"}"}],"esc\"key":1}`)
	v, ok := Lookup(obj, "namespace")
	require.True(t, ok)
	assert.Equal(t, `"_semantic/x"`, string(v), "top level only, not the nested one")
	s, ok := String(v)
	require.True(t, ok)
	assert.Equal(t, "_semantic/x", string(s))
	_, ok = Lookup(obj, "missing")
	assert.False(t, ok)

	var keys []string
	require.NoError(t, Fields(obj, func(f Field) bool { keys = append(keys, string(f.Key)); return true }))
	assert.Equal(t, []string{"id", "nested", "namespace", "n", `esc\"key`}, keys)
	assert.ErrorIs(t, Fields([]byte(`[1]`), func(Field) bool { return true }), ErrNotObject)

	_, ok = String([]byte(`"a\nb"`))
	assert.False(t, ok, "escaped strings need decoding")
	assert.True(t, HasNewline([]byte("{\n}")))
}

func TestLookupAllocatesNothing(t *testing.T) {
	obj := []byte(`{"id":"m1","title":"x","namespace":"_semantic"}`)
	assert.Zero(t, testing.AllocsPerRun(100, func() { Lookup(obj, "namespace") }))
}

// FuzzElements checks that slicing a valid array gives exactly the
// elements encoding/json finds.
func FuzzElements(f *testing.F) {
	for _, s := range []string{`[]`, `[1,"a",{"b":[2,"]"]}]`, `[ "\\\"" , null ]`, `[[[]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want []json.RawMessage
		if json.Unmarshal([]byte(s), &want) != nil || want == nil {
			return
		}
		got, err := Elements([]byte(s))
		require.NoError(t, err)
		require.Len(t, got, len(want))
		for i := range want {
			var a, b any
			require.NoError(t, json.Unmarshal(got[i], &a), "%q", got[i])
			require.NoError(t, json.Unmarshal(want[i], &b))
			assert.Equal(t, b, a)
		}
	})
}

func TestValid(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, ` {"a" : [1, -2.5e+3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"], "b":{}} `,
		`"str"`, `0`, `-0.1`, `[[[]],[{}]]`, `{"a":{"b":{"c":[1,{"d":2}]}}}`,
		`{`, `}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{a:1}`, `01`, `1.`, `.5`, `-`,
		`1e`, `tru`, `nulll`, `"abc`, "\"a\x01b\"", `"\x"`, `"\u12g4"`, `[1] 2`, `[1}`, `{"a":1]`, ``, ` `, `NaN`,
		`{not json`, `{"a":1}}`, `[[]`, "\"\xff\"",
	} {
		assert.Equal(t, json.Valid([]byte(s)), Valid([]byte(s)), "%q", s)
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b",{"c":null}]}`, `[1,]`, `"\u00e9"`, `{"a"}`, `-0.5e-3`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if json.Valid([]byte(s)) != Valid([]byte(s)) {
			t.Fatalf("%q: encoding/json says %v", s, json.Valid([]byte(s)))
		}
	})
}

// FuzzValidFields: ValidFields agrees with Valid, and its members are
// those Fields finds.
func FuzzValidFields(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b",{"c":null}],"d":{}, "e" : "x" }`, `{}`, `[1]`, `{"a"}`, ` {"k\"":1} `, `{"a":{"b":1},"c":[[]]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		fields, ok := ValidFields(data)
		if ok != Valid(data) {
			t.Fatalf("%q: ValidFields says %v, Valid %v", s, ok, !ok)
		}
		if !ok {
			return
		}
		var want []Field
		if Fields(data, func(f Field) bool { want = append(want, f); return true }) != nil {
			if fields != nil {
				t.Fatalf("%q: not an object, yet %d fields", s, len(fields))
			}
			return
		}
		if len(want) > maxTopFields {
			if fields != nil {
				t.Fatalf("%q: %d fields, over the bound", s, len(fields))
			}
			return
		}
		if len(fields) != len(want) {
			t.Fatalf("%q: %d fields, Fields finds %d", s, len(fields), len(want))
		}
		for i := range want {
			if string(fields[i].Key) != string(want[i].Key) || string(fields[i].Value) != string(want[i].Value) {
				t.Fatalf("%q: field %d is %q:%q, Fields finds %q:%q", s, i, fields[i].Key, fields[i].Value, want[i].Key, want[i].Value)
			}
		}
	})
}

func TestValidFieldsOfAWideObject(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range maxTopFields + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	b.WriteString("}")
	fields, ok := ValidFields([]byte(b.String()))
	assert.True(t, ok)
	assert.Nil(t, fields, "too wide: left to Fields")
	fields, ok = ValidFields([]byte(`{"a":1,"b":[2]}`))
	assert.True(t, ok)
	require.Len(t, fields, 2)
	assert.Equal(t, "[2]", string(fields[1].Value))
}

// checkIndex checks ValidIndex against Valid, ValidFields and a walk with
// EachPairElement of each array it indexed, and its bound.
func checkIndex(t *testing.T, data []byte, a, b string, bound int) Index {
	t.Helper()
	ix, ok := validIndex(data, a, b, bound)
	if ok != Valid(data) {
		t.Fatalf("%q: ValidIndex says %v, Valid %v", data, ok, !ok)
	}
	if !ok {
		return ix
	}
	if ascii := !slices.ContainsFunc(data, func(c byte) bool { return c >= 0x80 }); ix.ASCII != ascii {
		t.Fatalf("%q: ASCII is %v", data, ix.ASCII)
	}
	fields, _ := ValidFields(data)
	if len(fields) != len(ix.Fields) || (fields == nil) != (ix.Fields == nil) {
		t.Fatalf("%q: %d fields, ValidFields finds %d", data, len(ix.Fields), len(fields))
	}
	for i := range fields {
		if string(fields[i].Key) != string(ix.Fields[i].Key) || string(fields[i].Value) != string(ix.Fields[i].Value) {
			t.Fatalf("%q: field %d is %q:%q, ValidFields finds %q:%q", data, i, ix.Fields[i].Key, ix.Fields[i].Value, fields[i].Key, fields[i].Value)
		}
	}
	if ix.Arrays != nil && len(ix.Arrays) != len(ix.Fields) {
		t.Fatalf("%q: %d arrays for %d fields", data, len(ix.Arrays), len(ix.Fields))
	}
	held := 0
	sameAsWalk := func(arr []byte, els []ElementSpan) {
		t.Helper()
		held += cap(els) * elementSpanSize
		var want []Element
		if err := EachPairElement(arr, a, b, func(el Element) bool { want = append(want, el); return true }); err != nil {
			t.Fatalf("%q: indexed %q, not an array", data, arr)
		}
		if len(els) != len(want) {
			t.Fatalf("%q: %d elements indexed in %q, a walk finds %d", data, len(els), arr, len(want))
		}
		for j, w := range want {
			e := els[j]
			if string(e.Value.Of(arr)) != string(w.Value) || e.Pair() != w.Pair ||
				string(e.A.Of(arr)) != string(w.A) || string(e.B.Of(arr)) != string(w.B) ||
				(e.A.Of(arr) == nil) != (w.A == nil) || (e.B.Of(arr) == nil) != (w.B == nil) {
				t.Fatalf("%q: element %d of %q indexed as %q (%q, %q, %v), a walk finds %q (%q, %q, %v)", data, j, arr,
					e.Value.Of(arr), e.A.Of(arr), e.B.Of(arr), e.Pair(), w.Value, w.A, w.B, w.Pair)
			}
		}
	}
	for i, els := range ix.Arrays {
		if els != nil {
			sameAsWalk(ix.Fields[i].Value, els)
		}
	}
	if ix.Root != nil {
		sameAsWalk(bytes.TrimSpace(data), ix.Root)
	}
	if held > bound {
		t.Fatalf("%q: the index holds %d bytes, over its bound %d", data, held, bound)
	}
	return ix
}

func TestValidIndex(t *testing.T) {
	for _, c := range []struct {
		data   string
		arrays []int // the elements of each field, -1: not indexed
		root   int   // the elements of the root array, -1: not indexed
	}{
		{`{"q":"x","results":[{"score":0.5,"memory":{"id":"m"}}, {"memory":{},"score":1} ,3],"n":2}`, []int{-1, 3, -1}, -1},
		{` [ {"score" : 1 , "memory" : [{"a":1}] } , {"score":1,"memory":2,"x":3}, {"score":1}, {"score":1,"score":2}, [] , {} ] `, nil, 6},
		{`{"a":[],"b":[[]],"c":{"d":[1]},"e":[{"score":{"memory":1},"memory":[1,{"score":2}]}]}`, []int{0, 1, -1, 1}, -1},
		{`[]`, nil, 0},
		{`"x"`, nil, -1},
		{`{}`, []int{}, -1},
	} {
		ix := checkIndex(t, []byte(c.data), "score", "memory", 1<<20)
		for i, n := range c.arrays {
			if n < 0 {
				assert.Nil(t, ix.Arrays[i], "%s: field %d", c.data, i)
			} else {
				assert.Len(t, ix.Arrays[i], n, "%s: field %d", c.data, i)
			}
		}
		if c.root < 0 {
			assert.Nil(t, ix.Root, c.data)
		} else {
			assert.Len(t, ix.Root, c.root, c.data)
		}
	}
	ix := checkIndex(t, []byte(`[{"score":0.5,"memory":{"id":"m"}},{"memory":{},"score":1},{"score":1,"memory":2,"x":3}]`), "score", "memory", 1<<20)
	assert.True(t, ix.Root[0].Pair())
	assert.True(t, ix.Root[1].Pair())
	assert.False(t, ix.Root[2].Pair())
}

// TestValidIndexBound: an array of many tiny values is not indexed, and
// what was allocated for it stays within half the text.
func TestValidIndexBound(t *testing.T) {
	data := []byte(`{"a":[` + strings.Repeat("0,", 1<<20) + `0],"b":[1]}`)
	var ix Index
	allocs := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ix, _ = ValidIndex(data, "score", "memory")
		}
	}).AllocedBytesPerOp()
	assert.Nil(t, ix.Arrays[0])
	assert.Nil(t, ix.Arrays[1], "after the bound is reached, nothing more is indexed")
	assert.LessOrEqual(t, allocs, int64(len(data)/2))
	checkIndex(t, data, "score", "memory", len(data)/4)

	// Within a quarter of the text, records of a hundred bytes are indexed.
	var rec strings.Builder
	rec.WriteString(`{"results":[`)
	for i := range 1000 {
		if i > 0 {
			rec.WriteString(",")
		}
		fmt.Fprintf(&rec, `{"score":%d,"memory":{"id":"%090d"}}`, i, i)
	}
	rec.WriteString(`]}`)
	ix = checkIndex(t, []byte(rec.String()), "score", "memory", rec.Len()/4)
	require.Len(t, ix.Arrays[0], 1000)
	assert.True(t, ix.Arrays[0][999].Pair())
	ix, _ = ValidIndex([]byte(rec.String()), "score", "memory")
	assert.Len(t, ix.Arrays[0], 1000, "ValidIndex's bound is a quarter of the text")
}

// FuzzValidIndex: ValidIndex agrees with Valid and ValidFields, and each
// array it indexed holds what a walk with EachPairElement finds.
func FuzzValidIndex(f *testing.F) {
	for _, s := range []string{
		`{"a":[{"a":1,"b":2},{"b":[1],"a":{}},{"a":1},{"a":1,"a":2},{"a":1,"b":2,"c":3}],"b":[]}`,
		`[{"a":1,"b":2}, 1, "x", [{"a":1,"b":2}]]`, `{"a"}`, ` {"k\"":[1 , 2]} `, `[1,]`, `{"a":[1}`,
		`{"x":{"y":[{"a":1,"b":2}]}, "z" : [ {"b" : "}" , "a" : "]" } ] }`,
		`{"é":["\u00e9 long enough for a word", "a string of more than eight bytes, then é"]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkIndex(t, []byte(s), "a", "b", 1<<20)
		checkIndex(t, []byte(s), "a", "b", len(s)/4)
	})
}

// TestValidDepth: Valid takes exactly the nesting encoding/json takes.
func TestValidDepth(t *testing.T) {
	for _, n := range []int{maxNesting - 1, maxNesting, maxNesting + 1} {
		for _, s := range []string{
			strings.Repeat("[", n) + strings.Repeat("]", n),
			strings.Repeat("[", n) + "1" + strings.Repeat("]", n),
			`{"a":` + strings.Repeat(`{"b":`, n-1) + "{}" + strings.Repeat("}", n),
		} {
			assert.Equal(t, json.Valid([]byte(s)), Valid([]byte(s)), "depth %d, %.12s…", n, s)
		}
	}
}
