package jqsandbox

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"
)

// encoder prints results as jq -c does: gojq.Marshal's encoding (numbers,
// escapes: '<', '>' and '&' are not escaped), with the keys of objects in
// the order a keyOrder gives instead of sorted. It follows gojq's
// encoder.go (MIT License, Copyright (c) 2019-2026 itchyny), which cannot
// be given an order.
type encoder struct {
	order *keyOrder // nil: sorted keys
	buf   [64]byte
}

// marshalSized returns the encoding of v, a value gojq produced, whose
// encoding is about n bytes long (encodedLen): its buffer is allocated
// once.
func (e *encoder) marshalSized(v any, n int) []byte {
	b := bytes.NewBuffer(make([]byte, 0, n))
	e.encode(b, v)
	return b.Bytes()
}

func (e *encoder) encode(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.Write(strconv.AppendInt(e.buf[:0], int64(v), 10))
	case float64:
		e.float(b, v)
	case *big.Int:
		b.Write(v.Append(e.buf[:0], 10))
	case json.Number:
		b.WriteString(v.String())
	case string:
		encodeString(b, v)
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			e.encode(b, x)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range e.order.keys(v) {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeString(b, k)
			b.WriteByte(':')
			e.encode(b, v[k])
		}
		b.WriteByte('}')
	default:
		// gojq emits only the types above; never fail on another.
		b.WriteString("null")
	}
}

// float prints f as jq 1.6 does for the usual range: NaN as null,
// infinities as the largest doubles, exponents beyond 1e21 and below 1e-6.
func (e *encoder) float(b *bytes.Buffer, f float64) {
	if math.IsNaN(f) {
		b.WriteString("null")
		return
	}
	f = min(max(f, -math.MaxFloat64), math.MaxFloat64)
	format := byte('f')
	if x := math.Abs(f); x != 0 && x < 1e-6 || x >= 1e21 {
		format = 'e'
	}
	out := strconv.AppendFloat(e.buf[:0], f, format, -1, 64)
	if n := len(out); format == 'e' && n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
		out[n-2] = out[n-1] // e-09 -> e-9
		out = out[:n-1]
	}
	b.Write(out)
}

// encodeString writes s as a JSON string: \b and \f escaped by name, other
// control characters and invalid UTF-8 as \u escapes, nothing else
// escaped.
func encodeString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if ' ' <= c && c <= '~' && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		i += size
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}
