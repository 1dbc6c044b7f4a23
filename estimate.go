package lro

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/recipes"
	"github.com/mcplro/lro/internal/records"
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
// A byte of invalid UTF-8 is weighed as U+FFFD, half a token: the
// character a client receives in its place, since every SDK's JSON encoder
// replaces it so (4,700 such bytes arrive as 14,100).
//
// A consequence callers may rely on: no rune costs more than one token per
// three bytes of UTF-8, so len(p)/3 bounds the estimate of valid UTF-8 from
// above, and len(p)/2 that of any bytes.
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
		if p[i] < utf8.RuneSelf {
			n := max(asciiWords(p[i:]), 1) // a quarter token a byte
			q += n
			i += n
			continue
		}
		// A byte of invalid UTF-8 decodes as U+FFFD, the character a
		// client receives in its place: JSON encoders of every SDK
		// replace it so.
		r, size := utf8.DecodeRune(p[i:])
		q += runeWeight(r)
		i += size
	}
	return q
}

// asciiWords returns the length of the ASCII text that p starts with,
// rounded down to eight bytes unless it runs to the end of p: most results
// are ASCII JSON, read here 32 bytes at a time, then eight, then the last
// eight, overlapping those read already, so that the tail of a record of
// many costs one load, not a call a byte.
func asciiWords(p []byte) int {
	n := 0
	for ; len(p)-n >= 32; n += 32 {
		b := p[n : n+32]
		w := binary.LittleEndian.Uint64(b) | binary.LittleEndian.Uint64(b[8:]) |
			binary.LittleEndian.Uint64(b[16:]) | binary.LittleEndian.Uint64(b[24:])
		if w&asciiMask != 0 {
			break
		}
	}
	for ; len(p)-n >= 8; n += 8 {
		if binary.LittleEndian.Uint64(p[n:])&asciiMask != 0 {
			return n
		}
	}
	if n >= 8 && binary.LittleEndian.Uint64(p[len(p)-8:])&asciiMask == 0 {
		return len(p)
	}
	return n
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

// recordChecks is what checkRecords learned of the records of a set. The
// zero value knows nothing.
type recordChecks struct {
	// valid is how many records, from the first, are valid JSON: the
	// first record that is not, or all of them.
	valid int
	// newlines has a bit for each of those records that holds a raw line
	// break: nil while none does, so that a set of compact records
	// costs no memory.
	newlines []uint64
	// namespaces, when the records are memories, has counted the
	// namespaces of those records: writing them need not look again.
	namespaces *recipes.NSCounter
}

// checked reports whether record i is known to be valid JSON, and if so
// whether it holds a raw line break.
func (c *recordChecks) checked(i int) (ok, newline bool) {
	if i >= c.valid {
		return false, false
	}
	return true, c.newlines != nil && c.newlines[i/64]&(1<<(i%64)) != 0
}

// checkRecords estimates the records of src as estimateRecords does with
// the heuristic, and checks them as JSON in the same pass: checking a
// record learns whether it is ASCII, and for an ASCII text the heuristic
// is a quarter token a byte, so that only the others need quarterTokens.
// It counts the namespaces of memories on the way (the check finds the
// member), which writing them would otherwise look for in each record.
// After a record that is not JSON it only estimates: writing the set, if
// it is offloaded, stops there with the error it always gave.
func checkRecords(src records.Source, memories bool) (int, recordChecks) {
	var c recordChecks
	key := ""
	if memories {
		c.namespaces, key = recipes.NewNSCounter(), "namespace"
	}
	q, n := 0, src.Count()
	bad := false
	_ = src.Each(func(i int, r *records.Record) bool {
		q++ // the separating comma
		if !bad {
			ok, ascii := c.check(n, i, r.Line, key)
			if ascii {
				q += len(r.Line)
				return true
			}
			bad = !ok
		}
		q += quarterTokens(r.Line)
		return true
	})
	return (q + 3) / 4, c
}

// check checks record i of n, line, and notes what it learns; it
// reports whether the record is valid JSON, and ASCII.
func (c *recordChecks) check(n, i int, line []byte, key string) (ok, ascii bool) {
	f, ok := jsonscan.ValidFacts(line, key)
	if !ok {
		return false, false
	}
	c.valid = i + 1
	if f.Newline {
		if c.newlines == nil {
			c.newlines = make([]uint64, (n+63)/64)
		}
		c.newlines[i/64] |= 1 << (i % 64)
	}
	if c.namespaces != nil && f.Value != nil {
		c.namespaces.Count(f.Value)
	}
	return true, f.ASCII
}
