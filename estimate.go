package lro

import (
	"encoding/binary"
	"unicode/utf8"
)

// An Estimator estimates how many tokens a piece of text costs a model.
//
// EstimateTokens must be safe for concurrent use, must not retain or modify
// p, and should be cheap: it runs on every result a wrapped tool returns.
// Plug in a real tokenizer when the default heuristic is not close enough
// for your model.
type Estimator interface {
	EstimateTokens(p []byte) int
}

// EstimatorFunc adapts a function to the [Estimator] interface.
type EstimatorFunc func(p []byte) int

// EstimateTokens returns f(p).
func (f EstimatorFunc) EstimateTokens(p []byte) int { return f(p) }

// HeuristicEstimator is the default [Estimator]. It implements the
// specification's "characters / 4" rule for Latin script and refuses to
// undercount scripts that tokenizers split far more finely. Characters are
// runes, not bytes, and each rune is weighed by its script:
//
//   - ASCII and Latin-1 / Latin Extended (below U+0250): a quarter token;
//   - other alphabets and symbols below U+2E80 (Greek, Cyrillic, Arabic,
//     Hebrew, Indic scripts, Thai, punctuation): half a token;
//   - CJK ideographs, kana, Hangul, Yi, full-width forms and every rune
//     outside the Basic Multilingual Plane (emoji, CJK extensions): one
//     token each.
//
// The sum is rounded up. Common BPE tokenizers spend one token or more on a
// Chinese or Japanese character, so "runes / 4" would undercount such text
// four times over; the weights above keep the estimate on the safe side.
//
// A consequence callers may rely on: no rune costs more than one token per
// three bytes of UTF-8, so len(p)/3 bounds the estimate from above.
type HeuristicEstimator struct{}

// EstimateTokens returns the estimated token count of p.
func (HeuristicEstimator) EstimateTokens(p []byte) int {
	return (quarterTokens(p) + 3) / 4
}

const asciiMask = 0x8080808080808080

// quarterTokens returns the estimate of p in quarter tokens.
func quarterTokens(p []byte) int {
	q := 0
	i := 0
	for i < len(p) {
		// Most results are ASCII JSON: take eight bytes at a time while
		// none has its high bit set.
		for i+8 <= len(p) && binary.LittleEndian.Uint64(p[i:])&asciiMask == 0 {
			q += 8
			i += 8
		}
		if i >= len(p) {
			break
		}
		c := p[i]
		if c < utf8.RuneSelf {
			q++
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if size == 1 { // invalid UTF-8: count the byte as Latin text
			q++
		} else {
			q += runeWeight(r)
		}
		i += size
	}
	return q
}

// runeWeight returns the cost of one non-ASCII rune in quarter tokens.
func runeWeight(r rune) int {
	switch {
	case r < 0x0250:
		return 1
	case r < 0x1100:
		return 2
	case r < 0x1200: // Hangul Jamo
		return 4
	case r < 0x2E80:
		return 2
	case r < 0xA4D0: // CJK radicals … ideographs, Yi
		return 4
	case r >= 0xAC00 && r < 0xD7B0: // Hangul syllables
		return 4
	case r >= 0xF900 && r < 0xFB00: // CJK compatibility ideographs
		return 4
	case r >= 0xFE30 && r < 0xFE50: // CJK compatibility forms
		return 4
	case r >= 0xFF00 && r < 0xFFF0: // half- and full-width forms
		return 4
	case r >= 0x10000:
		return 4
	default:
		return 2
	}
}
