package jsonvalue

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decodeWith(t *testing.T, d *Decoder, s string) any {
	t.Helper()
	v, err := d.Decode([]byte(s))
	require.NoError(t, err, s)
	return v
}

func TestKeyOrdersRecordsEachObject(t *testing.T) {
	d := Decoder{Orders: NewKeyOrders()}
	rec := decodeWith(t, &d, `{"b":1,"a":{"z":1,"y":[{"q":1,"p":2}]},"c":3}`).(map[string]any)
	o := d.Orders

	exact := func(m map[string]any) []string { return o.Exact(SetHash(m), m) }
	assert.Equal(t, []string{"b", "a", "c"}, exact(rec))
	inner := rec["a"].(map[string]any)
	assert.Equal(t, []string{"z", "y"}, exact(inner))
	assert.Equal(t, []string{"q", "p"}, exact(inner["y"].([]any)[0].(map[string]any)))
	assert.Nil(t, exact(map[string]any{"a": 1, "b": 2}), "no object had exactly these keys")
	assert.Equal(t, [][]string{{"q", "p"}, {"z", "y"}, {"b", "a", "c"}}, slices.Collect(o.Sequences()),
		"inner objects end first")

	// The same sequence again is not recorded twice; another order of the
	// same keys is, and the first one met wins.
	decodeWith(t, &d, `{"b":2,"a":{"z":2,"y":[]},"c":4}`)
	decodeWith(t, &d, `{"c":2,"b":1,"a":3}`)
	assert.Equal(t, 4, o.Len())
	assert.Equal(t, []string{"b", "a", "c"}, exact(map[string]any{"a": 0, "b": 0, "c": 0}))

	r, ok := o.Rank("q")
	assert.True(t, ok)
	assert.Equal(t, 0, r, "q was the first key of the first object completed")
	_, ok = o.Rank("nope")
	assert.False(t, ok)
}

func TestKeyOrdersDuplicateKeysAndFailures(t *testing.T) {
	d := Decoder{Orders: NewKeyOrders()}
	m := decodeWith(t, &d, `{"z":1,"a":2,"z":3}`).(map[string]any)
	assert.Equal(t, []string{"z", "a"}, d.Orders.Exact(SetHash(m), m), "jq keeps a repeated key's first position")

	_, err := d.Decode([]byte(`{"x":1,"y":{"broken":`))
	require.Error(t, err)
	m = decodeWith(t, &d, `{"u":1,"v":2}`).(map[string]any)
	assert.Equal(t, []string{"u", "v"}, d.Orders.Exact(SetHash(m), m), "a failed decode leaves nothing behind")
}

func TestKeyOrdersAreBounded(t *testing.T) {
	d := Decoder{Orders: NewKeyOrders()}
	for i := range maxSequences + 100 {
		decodeWith(t, &d, fmt.Sprintf(`{"k%d":1,"x":2}`, i))
	}
	assert.Equal(t, maxSequences, d.Orders.Len())
	last := map[string]any{fmt.Sprintf("k%d", maxSequences+50): 1, "x": 2}
	assert.Nil(t, d.Orders.Exact(SetHash(last), last), "full: later objects keep no order")
}

func TestKeyOrdersNilIsEmpty(t *testing.T) {
	var o *KeyOrders
	m := map[string]any{"a": 1, "b": 2}
	assert.Nil(t, o.Exact(SetHash(m), m))
	assert.Zero(t, o.Len())
	assert.Empty(t, slices.Collect(o.Sequences()))
	_, ok := o.Rank("a")
	assert.False(t, ok)
}

// TestKeyOrdersConcurrentReaders reads while a decoder records, for -race.
func TestKeyOrdersConcurrentReaders(t *testing.T) {
	d := Decoder{Orders: NewKeyOrders()}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		m := map[string]any{"k1": 1, "x": 2}
		for {
			select {
			case <-stop:
				return
			default:
			}
			d.Orders.Exact(SetHash(m), m)
			for range d.Orders.Sequences() {
			}
			d.Orders.Rank("x")
		}
	})
	for i := range 300 {
		decodeWith(t, &d, fmt.Sprintf(`{"k%d":1,"x":2}`, i))
	}
	close(stop)
	wg.Wait()
	assert.Equal(t, 300, d.Orders.Len())
}

// BenchmarkDecodeKeyOrders measures what recording key orders costs.
func BenchmarkDecodeKeyOrders(b *testing.B) {
	rec := []byte(`{"id":"01KAQ7Z8M3V4W9X2Y5B6C7D8E9","memory_type":"semantic","title":"Caching strategy","namespace":"_semantic/architecture","tags":["caching"],"provenance":{"confidence":0.87,"trust_level":"verified"},"temporal":{"valid_from":"2024-03-01T10:00:00Z","decay":{"model":"exponential","strength":0.93}}}`)
	for _, orders := range []*KeyOrders{nil, NewKeyOrders()} {
		b.Run(fmt.Sprintf("recording=%v", orders != nil), func(b *testing.B) {
			d := Decoder{Orders: orders}
			b.SetBytes(int64(len(rec)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Decode(rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzKeyOrders checks that the recorded order of a top-level object is
// its keys in the order the text first gives them, as encoding/json's
// tokenizer reads them.
//
//	go test -run '^$' -fuzz FuzzKeyOrders -fuzztime 60s ./internal/jsonvalue
func FuzzKeyOrders(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":{"d":[],"c":{}}}`, `{"x":1,"x":2,"y":3}`, `{"\u00e9":1,"e\u0301":2}`, `{}`, `[{"q":1,"p":2}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := Decoder{Orders: NewKeyOrders()}
		v, err := d.Decode([]byte(s))
		m, ok := v.(map[string]any)
		if err != nil || !ok || len(m) < 2 {
			return
		}
		dec := json.NewDecoder(strings.NewReader(s))
		var want []string
		if _, err := dec.Token(); err != nil { // {
			t.Skip("encoding/json cannot tokenize it")
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Skip("encoding/json cannot tokenize it")
			}
			if key := k.(string); !slices.Contains(want, key) {
				want = append(want, key)
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				t.Skip("encoding/json cannot tokenize it")
			}
		}
		assert.Equal(t, want, d.Orders.Exact(SetHash(m), m), "%q", s)
	})
}
