package memstore

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Store indexes memories once so that Recall and List stay in the
// millisecond range at benchmark scale. It never changes after New, which
// is what makes it safe for concurrent use without locks; callers must not
// mutate the memories it hands out.
type Store struct {
	mems []Memory

	nsNames []string // distinct namespaces
	nsOf    []int32  // doc -> index into nsNames
	nsCount []int    // namespace -> number of docs

	byRecency []int32 // modified desc, id asc: the order of score ties
	recRank   []int32 // doc -> position in byRecency
	byCreated []int32 // created desc, id asc: the List order

	idx     index
	scratch sync.Pool // *scoreBuf
}

// New builds every index up front, trading construction time for fast
// queries. It copies mems shallowly, so reordering or replacing elements
// of the caller's slice afterwards cannot corrupt the indexes.
func New(mems []Memory) *Store {
	s := &Store{mems: slices.Clone(mems)}
	n := len(s.mems)
	s.nsOf = make([]int32, n)
	nsIDs := map[string]int32{}
	modified := make([]int64, n)
	created := make([]int64, n)
	for i := range s.mems {
		m := &s.mems[i]
		id, ok := nsIDs[m.Namespace]
		if !ok {
			id = int32(len(s.nsNames))
			nsIDs[m.Namespace] = id
			s.nsNames = append(s.nsNames, m.Namespace)
			s.nsCount = append(s.nsCount, 0)
		}
		s.nsOf[i] = id
		s.nsCount[id]++
		modified[i] = parseTime(m.Modified)
		created[i] = parseTime(m.Created)
	}
	s.byRecency = s.order(modified)
	s.recRank = make([]int32, n)
	for pos, d := range s.byRecency {
		s.recRank[d] = int32(pos)
	}
	s.byCreated = s.order(created)
	s.idx = buildIndex(s.mems)
	s.scratch.New = func() any { return &scoreBuf{scores: make([]float64, n)} }
	return s
}

// order sorts doc numbers by key desc, then id, then position, giving a
// total order so results never depend on sort stability.
func (s *Store) order(key []int64) []int32 {
	docs := make([]int32, len(s.mems))
	for i := range docs {
		docs[i] = int32(i)
	}
	slices.SortFunc(docs, func(a, b int32) int {
		if c := cmp.Compare(key[b], key[a]); c != 0 {
			return c
		}
		if c := strings.Compare(s.mems[a].ID, s.mems[b].ID); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return docs
}

// parseTime maps unparseable timestamps to the zero Unix time so such
// memories sort as oldest instead of failing the whole store.
func parseTime(v string) int64 {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0
	}
	return t.UnixNano()
}

// Len reports how many memories the store holds, for pagination and
// "n of total" messages.
func (s *Store) Len() int { return len(s.mems) }

// nsFilter reports, per namespace index, whether it falls under prefix,
// and how many docs match in total. A nil slice means "everything".
func (s *Store) nsFilter(prefix string) (match []bool, total int) {
	if prefix == "" {
		return nil, len(s.mems)
	}
	match = make([]bool, len(s.nsNames))
	for i, name := range s.nsNames {
		if strings.HasPrefix(name, prefix) {
			match[i] = true
			total += s.nsCount[i]
		}
	}
	return match, total
}

// List pages through memories newest-created first, the order people
// expect when browsing. total counts every memory under the namespace
// prefix so clients can tell how many pages remain.
func (s *Store) List(namespace string, offset, limit int) (page []*Memory, total int) {
	match, total := s.nsFilter(namespace)
	offset = max(offset, 0)
	if limit <= 0 {
		limit = total
	}
	page = []*Memory{}
	if offset >= total {
		return page, total
	}
	want := min(limit, total-offset)
	page = make([]*Memory, 0, want)
	if match == nil {
		for _, d := range s.byCreated[offset : offset+want] {
			page = append(page, &s.mems[d])
		}
		return page, total
	}
	seen := 0
	for _, d := range s.byCreated {
		if !match[s.nsOf[d]] {
			continue
		}
		if seen >= offset {
			page = append(page, &s.mems[d])
			if len(page) == want {
				break
			}
		}
		seen++
	}
	return page, total
}
