package jsonvalue

import (
	"hash/maphash"
	"iter"
	"sync"
)

// KeyOrders remembers the order of the keys of the objects a [Decoder]
// decodes. Decoded objects are Go maps, which have no order, while jq 1.6
// prints an object's keys in the order they were inserted: in the order of
// the input for objects it passes through. A printer that knows the order
// an object had can print it as jq would.
//
// Each distinct key sequence is kept once, and at most maxSequences of
// them (maxKeys keys in all): its size follows the variety of the records,
// not their number, and hostile input cannot grow it without bound.
// Objects met once it is full keep no order.
//
// One Decoder records into it; any number of goroutines may read it
// meanwhile.
type KeyOrders struct {
	// Used by the recording Decoder only.
	seen map[uint64]struct{} // ordered hashes of the sequences met
	full bool

	mu     sync.RWMutex
	seqs   [][]string       // distinct sequences, first met first
	bySet  map[uint64][]int // key set hash -> indices in seqs
	rank   map[string]int   // position of each key when first met
	stored int              // keys in seqs
}

const (
	maxSequences = 1024
	maxKeys      = 1 << 16
)

// NewKeyOrders returns an empty KeyOrders.
func NewKeyOrders() *KeyOrders {
	return &KeyOrders{seen: map[uint64]struct{}{}, bySet: map[uint64][]int{}, rank: map[string]int{}}
}

// seed makes key hashes comparable across KeyOrders and SetHash for the
// life of the process.
var seed = maphash.MakeSeed()

func keyHash(s string) uint64 { return maphash.String(seed, s) }

// mix spreads a key hash before it is summed into a set hash, so that
// sets of similar keys do not collide.
func mix(h uint64) uint64 {
	h ^= h >> 31
	h *= 0x9e3779b97f4a7c15
	return h ^ h>>29
}

// keyRef is a key of the object being decoded, with its hash.
type keyRef struct {
	s string
	h uint64
}

// record notes the key sequence of one decoded object. Objects of fewer
// than two keys have nothing to order.
func (o *KeyOrders) record(keys []keyRef) {
	if o.full || len(keys) < 2 {
		return
	}
	h := uint64(14695981039346656037) // FNV-1a over the key hashes
	for _, k := range keys {
		h = (h ^ k.h) * 1099511628211
	}
	if _, ok := o.seen[h]; ok {
		return
	}
	o.seen[h] = struct{}{}
	o.add(keys)
}

func (o *KeyOrders) add(keys []keyRef) {
	seq := make([]string, 0, len(keys))
	var set uint64
	for i, k := range keys {
		dup := false
		for _, prev := range keys[:i] {
			if prev.h == k.h && prev.s == k.s {
				dup = true // {"a":1,"a":2}: jq keeps the first position
				break
			}
		}
		if !dup {
			seq = append(seq, k.s)
			set += mix(k.h)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.seqs) >= maxSequences || o.stored+len(seq) > maxKeys {
		o.full = true
		return
	}
	o.bySet[set] = append(o.bySet[set], len(o.seqs))
	o.seqs = append(o.seqs, seq)
	o.stored += len(seq)
	for _, k := range seq {
		if _, ok := o.rank[k]; !ok {
			o.rank[k] = len(o.rank)
		}
	}
}

// SetHash returns the hash of the set of keys of m, as [KeyOrders.Exact]
// takes it. Key order does not change it.
func SetHash(m map[string]any) uint64 {
	var set uint64
	for k := range m {
		set += mix(keyHash(k))
	}
	return set
}

// Exact returns the first recorded key sequence whose keys are exactly
// those of m, h being SetHash(m), or nil. The caller must not modify it.
func (o *KeyOrders) Exact(h uint64, m map[string]any) []string {
	if o == nil {
		return nil
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	for _, i := range o.bySet[h] {
		if seq := o.seqs[i]; SameKeys(seq, m) {
			return seq
		}
	}
	return nil
}

// SameKeys reports whether seq, a list of distinct keys, holds exactly the
// keys of m.
func SameKeys(seq []string, m map[string]any) bool {
	if len(seq) != len(m) {
		return false
	}
	for _, k := range seq {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// Sequences yields the recorded key sequences, first met first. The
// caller must not modify them.
func (o *KeyOrders) Sequences() iter.Seq[[]string] {
	return func(yield func([]string) bool) {
		if o == nil {
			return
		}
		// Sequences are only appended, never changed: iterate over the
		// ones recorded so far without holding the lock.
		o.mu.RLock()
		seqs := o.seqs
		o.mu.RUnlock()
		for _, s := range seqs {
			if !yield(s) {
				return
			}
		}
	}
}

// Rank returns the position of key among all the keys recorded, in the
// order they were first met.
func (o *KeyOrders) Rank(key string) (int, bool) {
	if o == nil {
		return 0, false
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	r, ok := o.rank[key]
	return r, ok
}

// Len returns the number of sequences recorded. It only grows.
func (o *KeyOrders) Len() int {
	if o == nil {
		return 0
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	return len(o.seqs)
}
