package recipes

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"

	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/records"
)

// Stats is what the descriptor says of a set's records, learned while
// they are written, so that no other pass reads them: the namespaces of
// memories, the shape of generic records, the range of their scores.
type Stats struct {
	Namespaces *NSCounter // memories only
	Shape      *Shape     // generic records only: the first Sample
	Largest    int        // bytes of the largest record
	lo, hi     float64    // the range of the scores that are numbers
	scored     bool
}

// NewStats returns the stats of a set of memories, or of generic records.
func NewStats(generic bool) *Stats {
	s := &Stats{lo: math.Inf(1), hi: math.Inf(-1)}
	if generic {
		s.Shape = NewShape()
	} else {
		s.Namespaces = NewNSCounter()
	}
	return s
}

// Add learns one record; counted says that its namespace was counted
// already (see recordChecks).
func (s *Stats) Add(r *records.Record, counted bool) {
	s.Largest = max(s.Largest, len(r.Line))
	if s.Namespaces != nil && !counted {
		s.Namespaces.add(r.Line)
	}
	if s.Shape != nil && s.Shape.n < Sample {
		s.Shape.add(r.Line)
	}
	if r.Scored && !math.IsNaN(r.Score) && !math.IsInf(r.Score, 0) {
		s.lo, s.hi, s.scored = min(s.lo, r.Score), max(s.hi, r.Score), true
	}
}

// ScoreRange is the summary's score_range: nil without scores.
func (s *Stats) ScoreRange() *[2]float64 {
	if !s.scored {
		return nil
	}
	return &[2]float64{s.lo, s.hi}
}

// maxNamespaces bounds the distinct namespaces counted: past it, only
// those already seen are, so that a set of a million namespaces holds a
// bounded map. The top ones are very likely among the first seen.
const maxNamespaces = 4096

// NSCounter counts the records of each namespace. It reads only the
// namespace field of each record, without decoding the rest.
type NSCounter struct {
	// Pointer values let a lookup with a []byte key find the counter
	// without allocating; only a namespace seen for the first time does.
	counts map[string]*int
}

// NewNSCounter returns an empty counter.
func NewNSCounter() *NSCounter { return &NSCounter{counts: map[string]*int{}} }

// add counts the namespace of rec, a memory.
func (c *NSCounter) add(rec []byte) {
	if v, ok := jsonscan.Lookup(rec, "namespace"); ok {
		c.Count(v)
	}
}

// Count counts v, the value of a namespace member, when it is a string.
func (c *NSCounter) Count(v []byte) {
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

// Top returns up to n namespaces by number of records, most frequent
// first, ties in name order.
func (c *NSCounter) Top(n int) []string {
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
