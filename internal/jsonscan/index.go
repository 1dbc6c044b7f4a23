package jsonscan

import (
	"math"
	"unsafe"
)

// Index is what ValidIndex learns of a JSON text while validating it: the
// members of the outermost object, and where the elements of the arrays
// among them (or of an outermost array) are, so that finding the records
// of a result takes no second walk over it.
type Index struct {
	// Fields are the members of the outermost object, as ValidFields
	// returns them: nil when the text is not an object, or a wide one.
	Fields []Field
	// Arrays, when not nil, is parallel to Fields: Arrays[i], when not
	// nil, are the elements of Fields[i].Value, an array, from its
	// opening bracket.
	Arrays [][]ElementSpan
	// Root, when not nil, are the elements of the text, an array, from
	// its opening bracket.
	Root []ElementSpan
	// ASCII says that every byte of the text is ASCII: a token estimate
	// may then be had from its length.
	ASCII bool
}

// Span is where a value is in the array that holds it: bytes Start to
// End from the array's opening bracket. The zero Span is no value.
type Span struct{ Start, End int32 }

// Of returns the value in arr, the array the span was found in.
func (s Span) Of(arr []byte) []byte {
	if s.End == 0 {
		return nil
	}
	return arr[s.Start:s.End]
}

// ElementSpan is where an element is, and, when it is an object of
// exactly the two members asked for, their values: what EachPairElement
// yields of it, in a few words, not slices.
type ElementSpan struct{ Value, A, B Span }

// Pair reports whether the element is an object of exactly the two
// members asked for.
func (e ElementSpan) Pair() bool { return e.A.End != 0 }

// elementSpanSize is what the index holds per element.
const elementSpanSize = int(unsafe.Sizeof(ElementSpan{}))

// ValidIndex is ValidFields that also locates, in the same pass, the
// elements of the arrays among the members (or of the text, when it is an
// array), with the values of those elements that are objects of exactly
// the members a and b, in either order, as EachPairElement finds them.
//
// The spans together never take more than a quarter of the text's size,
// and what is allocated for them, half: an array of a million tiny values
// would need many times the text. Past that, the array being read and the
// ones after it are left unindexed (their entry is nil), for the caller to
// walk.
func ValidIndex(data []byte, a, b string) (Index, bool) {
	return validIndex(data, a, b, len(data)/4)
}

// validIndex is ValidIndex with the spans bounded to bound bytes.
func validIndex(data []byte, a, b string, bound int) (Index, bool) {
	tf := &topFields{fields: []Field{}}
	if len(data) <= math.MaxInt32 {
		tf.ix = &indexer{a: a, b: b, left: bound}
	}
	if !valid(data, tf) {
		return Index{}, false
	}
	ix := Index{ASCII: tf.ascii}
	if !tf.over && tf.fields != nil {
		ix.Fields = tf.fields
		if tf.ix != nil {
			ix.Arrays = tf.ix.arrays
		}
	}
	if tf.ix != nil {
		ix.Root = tf.ix.root
	}
	return ix, true
}

// indexer finds the elements of one array at a time during valid.
type indexer struct {
	a, b    string
	left    int  // bytes the spans may still take
	stopped bool // the bound was reached: index no more

	active bool // an array is being read
	depth  int  // the depth of its elements: 1 for an outermost array, else 2
	base   int  // where its opening bracket is
	els    []ElementSpan

	el      ElementSpan // the element being read
	obj     bool        // it is an object
	members int         // its members so far
	hasA    bool        // a member named a was seen
	hasB    bool
	pending int // 1 or 2: the member being read is a or b; 0: neither

	arrays [][]ElementSpan // parallel to the fields collected
	root   []ElementSpan
}

// open starts the array whose bracket is at i, whose elements are at
// depth d.
func (x *indexer) open(i, d int) {
	if x.stopped {
		return
	}
	x.active, x.depth, x.base, x.els = true, d, i, []ElementSpan{}
}

// close ends the array being read and returns its elements.
func (x *indexer) close() []ElementSpan {
	x.active = false
	els := x.els
	x.els = nil
	x.left -= cap(els) * elementSpanSize
	return els
}

// member notes the member, at depth d, whose key starts at keyAt.
func (x *indexer) member(data []byte, keyAt, d int) {
	if d != x.depth+1 || !x.obj {
		return
	}
	x.members++
	x.pending = 0
	if x.members > 2 {
		return
	}
	key := data[keyAt+1 : skipString(data, keyAt)-1]
	switch {
	case !x.hasA && string(key) == x.a:
		x.hasA, x.pending = true, 1
	case !x.hasB && string(key) == x.b:
		x.hasB, x.pending = true, 2
	}
}

// valueAt notes a value that starts at i, at depth d.
func (x *indexer) valueAt(data []byte, i, d int) {
	switch {
	case d == x.depth:
		x.el = ElementSpan{Value: Span{Start: int32(i - x.base)}}
		x.obj = data[i] == '{'
		x.members, x.hasA, x.hasB, x.pending = 0, false, false, 0
	case d == x.depth+1 && x.pending == 1:
		x.el.A.Start = int32(i - x.base)
	case d == x.depth+1 && x.pending == 2:
		x.el.B.Start = int32(i - x.base)
	}
}

// valueEnd notes that a value at depth d ends at i.
func (x *indexer) valueEnd(i, d int) {
	switch {
	case d == x.depth:
		x.el.Value.End = int32(i - x.base)
		if !x.obj || x.members != 2 || !x.hasA || !x.hasB {
			x.el.A, x.el.B = Span{}, Span{}
		}
		x.push(x.el)
	case d == x.depth+1 && x.pending == 1:
		x.el.A.End, x.pending = int32(i-x.base), 0
	case d == x.depth+1 && x.pending == 2:
		x.el.B.End, x.pending = int32(i-x.base), 0
	case d == x.depth-1 && x.depth == 1: // the outermost array ends
		x.root = x.close()
	}
}

// push appends e to the elements, growing them only within the bound.
func (x *indexer) push(e ElementSpan) {
	if len(x.els) == cap(x.els) {
		// Doubling, and never past the bound: what is ever allocated
		// stays within twice the bound, where append's own growth, or a
		// last step up to the bound, could pass it.
		n := max(2*cap(x.els), 16)
		if n > x.left/elementSpanSize {
			x.stopped, x.active, x.els = true, false, nil
			return
		}
		els := make([]ElementSpan, len(x.els), n)
		copy(els, x.els)
		x.els = els
	}
	x.els = append(x.els, e)
}
