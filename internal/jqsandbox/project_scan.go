package jqsandbox

import (
	"encoding/binary"
	"math/bits"

	"github.com/mcplro/lro/internal/jsonscan"
)

// The scanners of projDecoder: they validate as they skip, accepting what
// jsonscan.Valid (and encoding/json) accept and nothing else, so that a
// record line is read once instead of validated first and skipped then.
// (Strings may hold invalid UTF-8, as there.) Each returns the index after
// what it read, and false for what is invalid or cut short.

// SWAR constants: a byte of x below n shows in (x - n*lows) &^ x & highs;
// the lowest byte flagged is exact.
const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// scanString validates the string at data[i] (its opening quote): no
// control character, only JSON's escapes.
func scanString(data []byte, i int) (int, bool) {
	i++
	for {
		if i+8 <= len(data) {
			// Eight bytes at a time while none is a quote, a backslash or
			// a control character.
			w := binary.LittleEndian.Uint64(data[i:])
			q, b := w^(lows*'"'), w^(lows*'\\')
			if m := ((w-lows*0x20)&^w | (q-lows)&^q | (b-lows)&^b) & highs; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
			} else {
				i += 8
				continue
			}
		} else {
			for i < len(data) && data[i] >= 0x20 && data[i] != '"' && data[i] != '\\' {
				i++
			}
			if i >= len(data) {
				return i, false
			}
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		}
		// A backslash.
		var ok bool
		if i, ok = scanEscape(data, i); !ok {
			return i, false
		}
	}
}

// scanEscape validates the escape at data[i] (its backslash).
func scanEscape(data []byte, i int) (int, bool) {
	if i+1 >= len(data) {
		return i, false
	}
	switch data[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, true
	case 'u':
		if i+6 > len(data) {
			return i, false
		}
		for _, h := range data[i+2 : i+6] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return i, false
			}
		}
		return i + 6, true
	}
	return i, false
}

// scanWord validates the literal word (true, false, null) at data[i].
func scanWord(data []byte, i int, word string) (int, bool) {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// member validates the key and the colon of an object member at data[i]
// (white space first) and returns the raw key and where the value starts.
func member(data []byte, i int) ([]byte, int, bool) {
	i = jsonscan.SkipSpace(data, i)
	if i >= len(data) || data[i] != '"' {
		return nil, i, false
	}
	end, ok := scanString(data, i)
	if !ok {
		return nil, end, false
	}
	raw := data[i+1 : end-1]
	i = jsonscan.SkipSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		return nil, i, false
	}
	if i = jsonscan.SkipSpace(data, i+1); i >= len(data) {
		return nil, i, false
	}
	return raw, i, true
}

// next finds, after a value and white space, the comma or the closing
// byte of its container.
func next(data []byte, i int, closing byte) (int, bool) {
	i = jsonscan.SkipSpace(data, i)
	if i >= len(data) || data[i] != ',' && data[i] != closing {
		return i, false
	}
	return i, true
}
