package lro

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/records"
)

// setStats is what the descriptor says of a set's records, learned while
// they are written, so that no other pass reads them: the namespaces of
// memories, the shape of generic records, the range of their scores.
type setStats struct {
	namespaces *nsCounter // memories only
	shape      *shape     // generic records only: the first inferSample
	lo, hi     float64    // the range of the scores that are numbers
	scored     bool
	largest    int // bytes of the largest record
}

func newSetStats(generic bool) *setStats {
	s := &setStats{lo: math.Inf(1), hi: math.Inf(-1)}
	if generic {
		s.shape = newShape()
	} else {
		s.namespaces = newNSCounter()
	}
	return s
}

// add learns one record; counted says that its namespace was counted
// already (see recordChecks).
func (s *setStats) add(r *records.Record, counted bool) {
	s.largest = max(s.largest, len(r.Line))
	if s.namespaces != nil && !counted {
		s.namespaces.add(r.Line)
	}
	if s.shape != nil && s.shape.n < inferSample {
		s.shape.add(r.Line)
	}
	if r.Scored && !math.IsNaN(r.Score) && !math.IsInf(r.Score, 0) {
		s.lo, s.hi, s.scored = min(s.lo, r.Score), max(s.hi, r.Score), true
	}
}

// scoreRange is the summary's score_range: nil without scores.
func (s *setStats) scoreRange() *[2]float64 {
	if !s.scored {
		return nil
	}
	return &[2]float64{s.lo, s.hi}
}

// maxNamespaces bounds the distinct namespaces counted: past it, only
// those already seen are, so that a set of a million namespaces holds a
// bounded map. The top ones are very likely among the first seen.
const maxNamespaces = 4096

// nsCounter counts the records of each namespace. It reads only the
// namespace field of each record, without decoding the rest.
type nsCounter struct {
	// Pointer values let a lookup with a []byte key find the counter
	// without allocating; only a namespace seen for the first time does.
	counts map[string]*int
}

func newNSCounter() *nsCounter { return &nsCounter{counts: map[string]*int{}} }

// add counts the namespace of rec, a memory.
func (c *nsCounter) add(rec []byte) {
	if v, ok := jsonscan.Lookup(rec, "namespace"); ok {
		c.count(v)
	}
}

// count counts v, the value of a namespace member, when it is a string.
func (c *nsCounter) count(v []byte) {
	name, ok := jsonscan.String(v)
	if !ok {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return
		}
		name = []byte(s)
	}
	if len(name) > records.MaxCopiedBytes {
		name = []byte(records.ClipCopied(string(name)))
	}
	if n := c.counts[string(name)]; n != nil {
		*n++
		return
	}
	if len(c.counts) < maxNamespaces {
		one := 1
		c.counts[string(name)] = &one
	}
}

// top returns up to n namespaces by number of records, most frequent
// first, ties in name order.
func (c *nsCounter) top(n int) []string {
	names := make([]string, 0, len(c.counts))
	for name := range c.counts {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := cmp.Compare(*c.counts[b], *c.counts[a]); d != 0 {
			return d
		}
		return cmp.Compare(a, b)
	})
	return names[:min(n, len(names))]
}
