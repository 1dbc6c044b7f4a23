package jsonscan

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLookupKeysAsWritten: a key with an escape is matched as written,
// and text that is not an object has no members (TestFieldsAndLookup has
// the rest).
func TestLookupKeysAsWritten(t *testing.T) {
	v, ok := Lookup([]byte(`{"n":[1,{"k":"}"}],"esc\"key":1}`), `esc\"key`)
	assert.True(t, ok)
	assert.Equal(t, `1`, string(v))
	_, ok = Lookup([]byte(`[1]`), "id")
	assert.False(t, ok)
}

// FuzzLookup: Lookup finds the first member of the key that Fields
// yields in valid JSON, and never panics on other text.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":{"a":2}}`, `{"b":"\"a\"","a":[1]}`, `{"a`, `{"a":"\`, `{"":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		for _, key := range []string{"a", "b", ""} {
			v, ok := Lookup(data, key)
			if !json.Valid(data) {
				continue
			}
			var want []byte
			wantOK := false
			_ = Fields(data, func(f Field) bool {
				if string(f.Key) == key {
					want, wantOK = f.Value, true
				}
				return !wantOK
			})
			if ok != wantOK || string(v) != string(want) {
				t.Fatalf("%q, key %q: Lookup says %q, %v, Fields %q, %v", s, key, v, ok, want, wantOK)
			}
		}
	})
}
