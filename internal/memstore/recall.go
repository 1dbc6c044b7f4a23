package memstore

import "slices"

// Hit is one ranked recall result. Score is normalized to [0,1] so tools
// can show it without explaining BM25; Memory is excluded from JSON so
// callers choose the projection themselves.
type Hit struct {
	Score  float64 `json:"score"`
	Memory *Memory `json:"-"`
}

// scoreBuf is per-query scratch, pooled so concurrent queries over a large
// store do not each allocate a score per memory.
type scoreBuf struct {
	scores []float64 // by doc; all zero between queries
	cand   []int32
}

// Recall ranks every memory under the namespace prefix (all when empty)
// against query with BM25F and returns the best limit of them (all when
// limit <= 0). Memories that match no term still fill the result, newest
// modified first, so callers always get limit hits when that many exist;
// this is what makes result sizes predictable for offloading benchmarks.
func (s *Store) Recall(query, namespace string, limit int) []Hit {
	match, total := s.nsFilter(namespace)
	if limit <= 0 || limit > total {
		limit = total
	}
	if limit == 0 {
		return []Hit{}
	}

	buf := s.scratch.Get().(*scoreBuf)
	scores, cand := buf.scores, buf.cand[:0]
	for _, t := range s.idx.queryTerms(query) {
		idf := s.idx.idf[t]
		for _, p := range s.idx.postings[t] {
			if match != nil && !match[s.nsOf[p.doc]] {
				continue
			}
			if scores[p.doc] == 0 {
				cand = append(cand, p.doc)
			}
			tf := float64(p.tf)
			scores[p.doc] += idf * tf * (bm25K1 + 1) / (tf + s.idx.norm[p.doc])
		}
	}

	// better is a strict total order: score desc, then recency rank, which
	// already encodes modified desc, id asc.
	better := func(a, b int32) bool {
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return s.recRank[a] < s.recRank[b]
	}
	top := cand
	if len(top) > limit {
		top = selectTop(cand, limit, better)
	}
	slices.SortFunc(top, func(a, b int32) int {
		if better(a, b) {
			return -1
		}
		return 1
	})

	hits := make([]Hit, 0, limit)
	for _, d := range top {
		hits = append(hits, Hit{Score: scores[d], Memory: &s.mems[d]})
	}
	for _, d := range s.byRecency {
		if len(hits) == limit {
			break
		}
		if scores[d] == 0 && (match == nil || match[s.nsOf[d]]) {
			hits = append(hits, Hit{Memory: &s.mems[d]})
		}
	}
	if best := hits[0].Score; best > 0 {
		for i := range hits {
			hits[i].Score /= best
		}
	}

	for _, d := range cand {
		scores[d] = 0
	}
	buf.cand = cand[:0]
	s.scratch.Put(buf)
	return hits
}

// selectTop moves the k best docs of cand into cand[:k] (unordered) with a
// bounded min-heap, which beats sorting when k is much smaller than the
// number of matching docs. All docs remain in cand.
func selectTop(cand []int32, k int, better func(a, b int32) bool) []int32 {
	h := cand[:k]
	down := func(i int) {
		for {
			w := i
			if l := 2*i + 1; l < k && better(h[w], h[l]) {
				w = l
			}
			if r := 2*i + 2; r < k && better(h[w], h[r]) {
				w = r
			}
			if w == i {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for i := k; i < len(cand); i++ {
		if better(cand[i], h[0]) {
			cand[i], h[0] = h[0], cand[i]
			down(0)
		}
	}
	return h
}
