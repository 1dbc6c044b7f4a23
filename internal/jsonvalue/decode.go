// Package jsonvalue decodes JSON text into the plain values gojq works on
// (map[string]any, []any, float64, string, bool, nil), several times faster
// than encoding/json's reflection-driven decoding into an interface.
//
// lro_extract decodes every record of a file for every query; this is the
// difference between beating `tail | jq` and losing to it.
//
// Go maps forget the order of an object's keys, which jq prints; a Decoder
// given a KeyOrders remembers it (order.go).
package jsonvalue

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// A Decoder decodes values. It remembers object keys, so that the keys
// every record repeats are allocated once. It is not safe for concurrent
// use; the zero value is ready.
type Decoder struct {
	// Orders, when not nil, records the key order of every object decoded
	// (see KeyOrders). Nil costs nothing.
	Orders *KeyOrders

	keys  map[string]keyRef
	stack []keyRef // keys of the objects being decoded, outermost first
}

// maxDepth matches encoding/json's nesting limit.
const maxDepth = 10000

// SyntaxError reports invalid JSON text.
type SyntaxError struct {
	Offset int // byte offset of the error
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.msg)
}

var errDepth = errors.New("exceeded max depth")

// Decode decodes the single JSON value in data, surrounded by optional white
// space. Numbers become float64, like jq 1.6 stores them.
func (d *Decoder) Decode(data []byte) (any, error) {
	if d.keys == nil {
		d.keys = make(map[string]keyRef)
	}
	d.stack = d.stack[:0] // what a failed Decode left
	p := parser{data: data, d: d}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.data) {
		return nil, p.fail("extra data after the value")
	}
	return v, nil
}

type parser struct {
	data []byte
	i    int
	d    *Decoder
}

func (p *parser) fail(msg string) error { return &SyntaxError{Offset: p.i, msg: msg} }

func (p *parser) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.i >= len(p.data) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, _, err := p.string(false)
		return s, err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	}
	return nil, p.fail(fmt.Sprintf("unexpected character %q", p.data[p.i]))
}

func (p *parser) literal(word string, v any) (any, error) {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return nil, p.fail("invalid literal")
	}
	p.i += len(word)
	return v, nil
}

func (p *parser) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, &SyntaxError{Offset: p.i, msg: errDepth.Error()}
	}
	p.i++ // {
	m := make(map[string]any)
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, nil
	}
	orders := p.d.Orders
	start := len(p.d.stack)
	for {
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.fail("expected a string key")
		}
		k, h, err := p.string(true)
		if err != nil {
			return nil, err
		}
		if orders != nil {
			p.d.stack = append(p.d.stack, keyRef{k, h})
		}
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.fail("expected ':' after a key")
		}
		p.i++
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.fail("unexpected end of object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case '}':
			p.i++
			if orders != nil {
				orders.record(p.d.stack[start:])
				p.d.stack = p.d.stack[:start]
			}
			return m, nil
		default:
			return nil, p.fail("expected ',' or '}' in object")
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	if depth > maxDepth {
		return nil, &SyntaxError{Offset: p.i, msg: errDepth.Error()}
	}
	p.i++ // [
	a := []any{}
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.fail("unexpected end of array")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case ']':
			p.i++
			return a, nil
		default:
			return nil, p.fail("expected ',' or ']' in array")
		}
	}
}

// string decodes the string at p.i. Keys are interned, and come with their
// hash.
func (p *parser) string(key bool) (string, uint64, error) {
	start := p.i + 1
	i := start
	for i < len(p.data) {
		c := p.data[i]
		switch {
		case c == '"':
			raw := p.data[start:i]
			p.i = i + 1
			if key {
				k := p.d.intern(raw)
				return k.s, k.h, nil
			}
			return string(raw), 0, nil
		case c == '\\':
			return p.escaped(start, key)
		case c < 0x20:
			p.i = i
			return "", 0, p.fail("control character in string")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.data[i:])
			if r == utf8.RuneError && size == 1 {
				// encoding/json replaces invalid UTF-8; so do we.
				return p.escaped(start, key)
			}
			i += size
		default:
			i++
		}
	}
	p.i = len(p.data)
	return "", 0, p.fail("unterminated string")
}

// escaped decodes a string holding escapes or invalid UTF-8.
func (p *parser) escaped(start int, key bool) (string, uint64, error) {
	buf := make([]byte, 0, 32)
	i := start
	for i < len(p.data) {
		c := p.data[i]
		switch {
		case c == '"':
			p.i = i + 1
			if key {
				k := p.d.intern(buf)
				return k.s, k.h, nil
			}
			return string(buf), 0, nil
		case c < 0x20:
			p.i = i
			return "", 0, p.fail("control character in string")
		case c == '\\':
			if i+1 >= len(p.data) {
				p.i = i
				return "", 0, p.fail("unterminated escape")
			}
			i++
			switch e := p.data[i]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := hex4(p.data, i+1)
				if !ok {
					p.i = i
					return "", 0, p.fail("invalid \\u escape")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(p.data, i+3); ok && i+2 < len(p.data) && p.data[i+1] == '\\' && p.data[i+2] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							r = dec
							i += 6
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				buf = utf8.AppendRune(buf, r)
			default:
				p.i = i
				return "", 0, p.fail("invalid escape")
			}
			i++
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.data[i:])
			buf = utf8.AppendRune(buf, r) // U+FFFD for invalid bytes
			i += size
		default:
			buf = append(buf, c)
			i++
		}
	}
	p.i = len(p.data)
	return "", 0, p.fail("unterminated string")
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number decodes a number, checking JSON's grammar: -?int(.digits)?([eE][+-]?digits)?
func (p *parser) number() (any, error) {
	start := p.i
	i := p.i
	if p.data[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(p.data) && p.data[i] >= '0' && p.data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	intStart := i
	n := digits()
	if n == 0 || n > 1 && p.data[intStart] == '0' {
		p.i = i
		return nil, p.fail("invalid number")
	}
	simple := n <= 15
	if i < len(p.data) && p.data[i] == '.' {
		i++
		simple = false
		if digits() == 0 {
			p.i = i
			return nil, p.fail("invalid number")
		}
	}
	if i < len(p.data) && (p.data[i] == 'e' || p.data[i] == 'E') {
		i++
		simple = false
		if i < len(p.data) && (p.data[i] == '+' || p.data[i] == '-') {
			i++
		}
		if digits() == 0 {
			p.i = i
			return nil, p.fail("invalid number")
		}
	}
	p.i = i
	text := p.data[start:i]
	if simple { // exact in a float64: no need for strconv
		var v int64
		for _, c := range text[intStart-start:] {
			v = v*10 + int64(c-'0')
		}
		if text[0] == '-' {
			if v == 0 {
				return negZero, nil
			}
			v = -v
		}
		return float64(v), nil
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), 64)
	if err != nil {
		// Out of range: encoding/json fails too; jq 1.6 saturates. Follow jq.
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return f, nil
		}
		return nil, p.fail("invalid number")
	}
	return f, nil
}

var negZero = func() float64 { z := 0.0; return -z }()

// intern returns key as a string, allocated and hashed once per distinct
// key.
func (d *Decoder) intern(b []byte) keyRef {
	if k, ok := d.keys[string(b)]; ok {
		return k
	}
	s := string(b)
	k := keyRef{s, keyHash(s)}
	if len(d.keys) < 4096 { // bounded: hostile input cannot grow it forever
		d.keys[s] = k
	}
	return k
}
