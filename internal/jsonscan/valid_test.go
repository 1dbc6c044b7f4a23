package jsonscan

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstStop is the index in w of the first byte that ends a run of plain
// string content (plain: ASCII too), 8 when there is none: what the masks
// of stops and plainMasks must say, byte by byte.
func firstStop(w uint64, plain bool) int {
	for k := range 8 {
		c := byte(w >> (8 * k))
		if stringStop[c] || plain && c >= 0x80 {
			return k
		}
	}
	return 8
}

func checkStops(t *testing.T, w uint64) {
	t.Helper()
	k := plainConsts
	if got, want := bits.TrailingZeros64(stops(w))>>3, firstStop(w, false); got != want {
		t.Fatalf("stops(%#016x) flags byte %d first, want %d", w, got, want)
	}
	if got, want := bits.TrailingZeros64(k.stops(w))>>3, firstStop(w, true); got != want {
		t.Fatalf("plainMasks.stops(%#016x) flags byte %d first, want %d", w, got, want)
	}
}

// TestStops: the lowest byte the SWAR tests flag is the first that stops
// a scan, for every pair of bytes at every place in a word (a byte can
// only disturb the ones above it, through a borrow), and for random words
// of the bytes that matter.
func TestStops(t *testing.T) {
	for p := range 7 {
		for x := range 256 {
			for y := range 256 {
				w := uint64(lows * 'a')
				w = w&^(0xffff<<(8*p)) | uint64(x)<<(8*p) | uint64(y)<<(8*(p+1))
				checkStops(t, w)
			}
		}
	}
	pick := []byte{0, 0x1f, ' ', '!', '"', '#', '[', '\\', ']', 'a', 0x7f, 0x80, 0xa0, 0xa2, 0xdc, 0xff}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		var w uint64
		for k := range 8 {
			w |= uint64(pick[r.IntN(len(pick))]) << (8 * k)
		}
		checkStops(t, w)
	}
}

func TestValidFacts(t *testing.T) {
	for _, c := range []struct {
		text, key string
		ok        bool
		facts     Facts
	}{
		{`{"a":1}`, "a", true, Facts{ASCII: true, Value: []byte(`1`)}},
		{`{"b":{"a":1},"a" : "x\n"}`, "a", true, Facts{ASCII: true, Value: []byte(`"x\n"`)}},
		{`{"a":[1],"a":2}`, "a", true, Facts{ASCII: true, Value: []byte(`[1]`)}},
		{`{"ab":1,"b":2}`, "a", true, Facts{ASCII: true}},
		{`[{"a":1}]`, "a", true, Facts{ASCII: true}},
		{"{\n\t\"a\": \"é\"\r\n}", "a", true, Facts{Newline: true, Value: []byte(`"é"`)}},
		{`{"k":"a long string, then é"}`, "", true, Facts{}},
		{`"\u00e9"`, "", true, Facts{ASCII: true}},
		{"\"a\nb\"", "", false, Facts{}},
		{`{"a":1,}`, "a", false, Facts{}},
	} {
		f, ok := ValidFacts([]byte(c.text), c.key)
		assert.Equal(t, c.ok, ok, "%q", c.text)
		assert.Equal(t, c.facts, f, "%q", c.text)
	}
}

// FuzzValidFacts: ValidFacts agrees with encoding/json, its facts are
// true of the text, and the value it finds is Lookup's.
func FuzzValidFacts(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b",{"a":null}]}`, "{\"a\" :\n\"é\"}", `[1,]`, `{"a":1,"a":2}`, `{"\u0061":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		facts, ok := ValidFacts(data, "a")
		require.Equal(t, json.Valid(data), ok, "%q", s)
		if !ok {
			return
		}
		ascii := true
		for _, c := range data {
			ascii = ascii && c < 0x80
		}
		assert.Equal(t, ascii, facts.ASCII, "%q", s)
		assert.Equal(t, bytes.ContainsAny(data, "\n\r"), facts.Newline, "%q", s)
		want, found := Lookup(data, "a")
		assert.Equal(t, found, facts.Value != nil, "%q", s)
		assert.Equal(t, string(want), string(facts.Value), "%q", s)
	})
}
