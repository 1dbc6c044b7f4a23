package jsonscan

import (
	"encoding/json"
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
