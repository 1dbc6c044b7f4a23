package recipes

import (
	"bytes"

	"github.com/mcplro/lro/internal/jsonscan"
)

// A recipe that takes a search term runs as written: its default is a word
// found in what it searches, so that every recipe of a descriptor prints
// something on the records it was inferred from, and a model sees what a
// match looks like before it puts in its own word. The word is one of the
// first value's, the one fewest of the next values hold (the most
// telling); what has no word keeps the placeholder. A tag list's default
// is the first element seen.

const (
	minWord    = 4   // letters of a word worth searching for
	maxWord    = 24  // and at most
	maxWords   = 8   // candidates taken from the first value
	wordScan   = 512 // bytes of a value searched for words or candidates
	wordSample = 64  // values after the first that candidates are counted in
)

// words holds what was learned of a search term.
type words struct {
	cands []string // the first value's words, longest first
	hits  []int    // values that held each, after the first
	seen  int      // values counted after the first
	tries int      // values searched for candidates
}

// add learns one value: text, the bytes of a JSON string between its
// quotes, or of a whole record, whose words are searched for with find.
func (w *words) add(text []byte, find func([]byte) []string) {
	text = text[:min(len(text), wordScan)]
	if w.cands == nil {
		if w.tries++; w.tries <= wordSample {
			w.cands = find(text)
			w.hits = make([]int, len(w.cands))
		}
		return
	}
	if w.seen >= wordSample {
		return
	}
	w.seen++
	for i, c := range w.cands {
		if bytes.Contains(text, []byte(c)) {
			w.hits[i]++
		}
	}
}

// addString learns one string value, raw JSON with its quotes.
func (w *words) addString(v []byte) { w.add(v[1:len(v)-1], wordsOf) }

// addRecord learns one record, raw JSON, by the words of its string
// values at any depth (not its keys).
func (w *words) addRecord(r []byte) { w.add(r, valueWords) }

// best returns the word fewest values held, the longest of those, or ""
// when no value had one.
func (w *words) best() string {
	best := -1
	for i := range w.cands {
		if best < 0 || w.hits[i] < w.hits[best] {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return w.cands[best]
}

// wordsOf returns the words of raw, the bytes of a JSON string between its
// quotes, longest first (the first of equals first), at most maxWords; nil
// when there is none. A word is a run of minWord to maxWord ASCII letters;
// failing those, of ASCII letters and digits with a letter; failing those,
// of digits. An escape separates words, and so does every byte not in the
// run, so that each word is text of the decoded string, which a
// case-insensitive regexp of it matches.
func wordsOf(raw []byte) []string {
	letter := func(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	hasLetter := func(b []byte) bool {
		return bytes.ContainsFunc(b, func(r rune) bool { return r < 0x80 && letter(byte(r)) })
	}
	tiers := []struct {
		in      func(byte) bool
		minLen  int
		keepRun func([]byte) bool
	}{
		{letter, minWord, nil},
		{func(c byte) bool { return letter(c) || digit(c) }, 2, hasLetter},
		{digit, 1, nil},
	}
	for _, tier := range tiers {
		var out []string
		for i := 0; i < len(raw); {
			if raw[i] == '\\' {
				i += 2
				if i-1 < len(raw) && raw[i-1] == 'u' {
					i += 4
				}
				continue
			}
			j := i
			for j < len(raw) && tier.in(raw[j]) {
				j++
			}
			run := raw[i:j]
			if n := j - i; n >= tier.minLen && n <= maxWord && (tier.keepRun == nil || tier.keepRun(run)) && !containsString(out, run) {
				out = append(out, string(run))
			}
			i = max(j, i+1)
		}
		if len(out) > 0 {
			// Longest first, stably.
			for i := 1; i < len(out); i++ {
				for k := i; k > 0 && len(out[k]) > len(out[k-1]); k-- {
					out[k], out[k-1] = out[k-1], out[k]
				}
			}
			return out[:min(len(out), maxWords)]
		}
	}
	return nil
}

// valueWords returns the words of the first string value of a record, raw
// JSON (perhaps cut), that has any: a string followed by ':' is a key.
func valueWords(r []byte) []string {
	for i := 0; i < len(r); i++ {
		if r[i] != '"' {
			continue
		}
		end := jsonscan.SkipString(r, i)
		if end <= i+1 || end > len(r) {
			return nil
		}
		k := jsonscan.SkipSpace(r, end)
		if k >= len(r) && i > 0 {
			return nil // cut: a key or a value, who knows (a record is never a key)
		}
		if k < len(r) && r[k] == ':' {
			i = end - 1
			continue
		}
		if ws := wordsOf(r[i+1 : end-1]); ws != nil {
			return ws
		}
		i = end - 1
	}
	return nil
}

func containsString(list []string, b []byte) bool {
	for _, s := range list {
		if s == string(b) {
			return true
		}
	}
	return false
}
