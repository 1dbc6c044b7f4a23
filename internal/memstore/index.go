package memstore

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// BM25F parameters. Titles weigh most because users search by what a
// memory is called; tags are curated, so they beat free text.
const (
	bm25K1        = 1.2
	bm25B         = 0.75
	weightTitle   = 4
	weightTags    = 2
	weightSummary = 1.5
	weightContent = 1
)

type posting struct {
	doc int32
	tf  float32 // field-weighted term frequency
}

// index is an inverted index with everything BM25 needs precomputed, so a
// query only walks the postings of its own terms.
type index struct {
	terms    map[string]int32
	postings [][]posting // by term id, docs ascending
	idf      []float64   // by term id
	norm     []float64   // by doc: k1 * (1 - b + b*len/avgLen)
}

func buildIndex(mems []Memory) index {
	ix := index{terms: map[string]int32{}, norm: make([]float64, len(mems))}
	var (
		tf      []float32 // by term id, for the current doc only
		touched []int32
		buf     []byte
		docLen  float64
		total   float64
	)
	add := func(text string, w float32) {
		buf = tokenize(text, buf, func(tok []byte) {
			id, ok := ix.terms[string(tok)]
			if !ok {
				id = int32(len(ix.postings))
				ix.terms[string(tok)] = id
				ix.postings = append(ix.postings, nil)
				tf = append(tf, 0)
			}
			if tf[id] == 0 {
				touched = append(touched, id)
			}
			tf[id] += w
			docLen += float64(w)
		})
	}
	for d := range mems {
		m := &mems[d]
		docLen = 0
		add(m.Title, weightTitle)
		for _, t := range m.Tags {
			add(t, weightTags)
		}
		add(m.Summary, weightSummary)
		add(m.Content, weightContent)
		for _, id := range touched {
			ix.postings[id] = append(ix.postings[id], posting{doc: int32(d), tf: tf[id]})
			tf[id] = 0
		}
		touched = touched[:0]
		ix.norm[d] = docLen
		total += docLen
	}
	avg := total / float64(max(len(mems), 1))
	for d, l := range ix.norm {
		ix.norm[d] = bm25K1
		if avg > 0 {
			ix.norm[d] = bm25K1 * (1 - bm25B + bm25B*l/avg)
		}
	}
	n := float64(len(mems))
	ix.idf = make([]float64, len(ix.postings))
	for id, ps := range ix.postings {
		df := float64(len(ps))
		ix.idf[id] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	return ix
}

// queryTerms returns the distinct indexed term ids of query; terms absent
// from the index cannot contribute and are dropped.
func (ix *index) queryTerms(query string) []int32 {
	var ids []int32
	tokenize(query, nil, func(tok []byte) {
		id, ok := ix.terms[string(tok)]
		if !ok {
			return
		}
		for _, have := range ids {
			if have == id {
				return
			}
		}
		ids = append(ids, id)
	})
	return ids
}

// stopwords are too common in the generated text to help ranking and
// only bloat the postings.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "at": true, "by": true, "for": true,
	"in": true, "is": true, "it": true, "of": true, "on": true, "or": true,
	"the": true, "to": true, "we": true, "when": true, "with": true,
}

// tokenize calls fn with each lower-cased run of letters and digits in
// text, skipping stopwords. The token bytes are only valid during the
// call; buf is scratch space returned for reuse so indexing a large
// corpus does not allocate per token.
func tokenize(text string, buf []byte, fn func(tok []byte)) []byte {
	emit := func() {
		if len(buf) > 0 && !stopwords[string(buf)] {
			fn(buf)
		}
		buf = buf[:0]
	}
	buf = buf[:0]
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				buf = append(buf, c)
			case 'A' <= c && c <= 'Z':
				buf = append(buf, c+'a'-'A')
			default:
				emit()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		} else {
			emit()
		}
	}
	emit()
	return buf
}
