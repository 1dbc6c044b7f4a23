package jsonscan

import (
	"encoding/json"
	"fmt"
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

func BenchmarkValid(b *testing.B) {
	rec := []byte(`{"id":"01KAQ7Z8M3V4W9X2Y5B6C7D8E9","memory_type":"semantic","title":"Caching strategy for session tokens","namespace":"_semantic/architecture","tags":["caching","security"],"created":"2024-03-01T10:00:00Z","content":"Session tokens are cached in Redis with a TTL matching the token lifetime so that revocation is immediate.","provenance":{"confidence":0.87,"trust_level":"verified"},"temporal":{"decay":{"model":"exponential","half_life_days":90,"strength":0.93}}}`)
	b.Run("jsonscan", func(b *testing.B) {
		b.SetBytes(int64(len(rec)))
		for b.Loop() {
			if !Valid(rec) {
				b.Fatal()
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(rec)))
		for b.Loop() {
			if !json.Valid(rec) {
				b.Fatal()
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
