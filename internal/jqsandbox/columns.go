package jqsandbox

import (
	"maps"
	"slices"
)

// columns hold projected records compactly, for a cache: the value of each
// top-level key the projection keeps in a column of its own, rather than a
// map per record. A Go map of one or two entries takes about 300 bytes,
// more than the fields a query reads of a memory (a title, a namespace):
// 100,000 memories' titles and namespaces take 45 MB as maps, 14 as
// columns, and fit a worker's cache. A query rebuilds the maps a batch at
// a time: a second recipe 3 of 100,000 memories takes 54 ms in a worker,
// its first, which decodes the file, 340.
type columns struct {
	keys []string // the keys kept, sorted
	vals [][]any  // vals[k][i] is record i's value of keys[k], or absent{}
	// other holds, by index, the records that are not objects of the kept
	// keys (decoded whole, or not objects), as they were decoded.
	other map[int]any
	n     int
	bytes int64 // estimate of the memory they take
}

// absent marks a key that a record does not have (a zero-size value:
// storing it allocates nothing).
type absent struct{}

func newColumns(p *projNode) *columns {
	keys := slices.Sorted(maps.Keys(p.fields))
	return &columns{keys: keys, vals: make([][]any, len(keys))}
}

// add appends a record.
func (c *columns) add(v any) {
	i := c.n
	c.n++
	c.bytes += 16 * int64(len(c.keys))
	m, ok := v.(map[string]any)
	if ok {
		for k := range m {
			if _, found := slices.BinarySearch(c.keys, k); !found {
				ok = false
				break
			}
		}
	}
	if !ok {
		if c.other == nil {
			c.other = map[int]any{}
		}
		c.other[i] = v
		c.bytes += 64 + valueBytes(v)
		for k := range c.keys {
			c.vals[k] = append(c.vals[k], absent{})
		}
		return
	}
	for k, key := range c.keys {
		x, found := m[key]
		if !found {
			c.vals[k] = append(c.vals[k], absent{})
			continue
		}
		c.vals[k] = append(c.vals[k], x)
		c.bytes += valueBytes(x)
	}
}

// fill sets dst[j] to record from+j, rebuilt.
//
// reuse, when not nil, holds maps of a batch the query is done with, to
// be cleared and filled again rather than allocated: a query of 100,000
// records would otherwise make 30 MB of garbage (about a third of its
// time). Only for a stream, whose batches are encoded as they are
// evaluated: nothing of one is referenced once the next is filled.
func (c *columns) fill(dst []any, from int, reuse []map[string]any) []any {
	for j := range dst {
		i := from + j
		if v, ok := c.other[i]; ok {
			dst[j] = v
			continue
		}
		var m map[string]any
		if reuse != nil && reuse[j] != nil {
			m = reuse[j]
			clear(m)
		} else {
			m = make(map[string]any, len(c.keys))
			if reuse != nil {
				reuse[j] = m
			}
		}
		for k, key := range c.keys {
			if x := c.vals[k][i]; x != nil {
				if _, none := x.(absent); none {
					continue
				}
			}
			m[key] = c.vals[k][i]
		}
		dst[j] = m
	}
	return dst
}

// passes reports whether record i passes c (see onceCheck.passesValue)
// without rebuilding it.
func (cs *columns) passes(i int, c *onceCheck) bool {
	if v, ok := cs.other[i]; ok {
		return c.passesValue(v)
	}
	for _, key := range c.scalars {
		k, found := slices.BinarySearch(cs.keys, key)
		if !found {
			return false // not kept: let the query look
		}
		switch cs.vals[k][i].(type) {
		case []any, map[string]any:
			return false
		}
	}
	return true
}

// trim lets go of the room the columns kept to grow, and counts it.
func (c *columns) trim() {
	for k, col := range c.vals {
		c.vals[k] = slices.Clip(col)
		c.bytes += 16 * int64(cap(col)-len(col))
	}
}

// valueBytes estimates the memory a decoded value takes beyond the
// interface holding it.
func valueBytes(v any) int64 {
	switch v := v.(type) {
	case string:
		return 16 + int64(len(v))
	case float64:
		return 8
	case []any:
		n := 24 + 16*int64(len(v))
		for _, x := range v {
			n += valueBytes(x)
		}
		return n
	case map[string]any:
		n := 48 + 40*int64(len(v))
		for k, x := range v {
			n += int64(len(k)) + valueBytes(x)
		}
		return n
	}
	return 0
}
