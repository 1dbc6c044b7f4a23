package jsonvalue

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`,
		` [ 1.5e3 , -0.25, 0, -0, 123456789012345678, 1E-7 ] `,
		`"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \ud800 x"`,
		`{"ünï":"çødé 字"}`,
		`[]`, `{}`, `""`, `null`,
		`{"a":1,"a":2}`,
	} {
		var want any
		require.NoError(t, json.Unmarshal([]byte(s), &want), s)
		var d Decoder
		got, err := d.Decode([]byte(s))
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
}

func TestDecodeRejectsInvalid(t *testing.T) {
	for _, s := range []string{
		``, `{`, `[1,]`, `{"a"}`, `{"a":1,}`, `01`, `1.`, `.5`, `-`, `1e`, `tru`, `nul`,
		`"abc`, "\"a\x01b\"", `"\x"`, `"\u12"`, `[1] 2`, `{a:1}`, `'a'`, `NaN`,
	} {
		var d Decoder
		_, err := d.Decode([]byte(s))
		var se *SyntaxError
		assert.ErrorAs(t, err, &se, "%q", s)
		assert.Error(t, json.Unmarshal([]byte(s), new(any)), "encoding/json agrees that %q is invalid", s)
	}
}

func TestDecodeDepthAndRange(t *testing.T) {
	var d Decoder
	_, err := d.Decode([]byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001)))
	assert.ErrorContains(t, err, "max depth")
	v, err := d.Decode([]byte(`1e999`))
	require.NoError(t, err, "jq 1.6 reads out-of-range numbers as infinity")
	assert.True(t, math.IsInf(v.(float64), 1))
	v, err = d.Decode([]byte(`-0`))
	require.NoError(t, err)
	assert.True(t, math.Signbit(v.(float64)))
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `-12.5e-3`, `[[[]]]`, "\"\xff\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want any
		wantErr := json.Unmarshal([]byte(s), &want)
		var d Decoder
		got, err := d.Decode([]byte(s))
		if wantErr != nil {
			// Only numbers out of float64 range are accepted where
			// encoding/json refuses them.
			if err == nil {
				var ute *json.UnmarshalTypeError
				require.ErrorAs(t, wantErr, &ute, "%q: accepted, encoding/json says %v", s, wantErr)
			}
			return
		}
		require.NoError(t, err, "%q", s)
		assert.Equal(t, want, got, "%q", s)
	})
}

func BenchmarkDecode(b *testing.B) {
	rec := []byte(`{"id":"01KAQ7Z8M3V4W9X2Y5B6C7D8E9","memory_type":"semantic","title":"Caching strategy for session tokens","namespace":"_semantic/architecture","tags":["caching","security"],"created":"2024-03-01T10:00:00Z","modified":"2024-05-01T10:00:00Z","status":"active","content":"Session tokens are cached in Redis with a TTL matching the token lifetime so that revocation is immediate.","summary":"Tokens cached in Redis.","provenance":{"confidence":0.87,"trust_level":"verified","source_type":"conversation","agent":"claude"},"temporal":{"valid_from":"2024-03-01T10:00:00Z","decay":{"model":"exponential","half_life_days":90,"strength":0.93}}}`)
	b.Run("jsonvalue", func(b *testing.B) {
		var d Decoder
		b.SetBytes(int64(len(rec)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Decode(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(rec)))
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(rec, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
