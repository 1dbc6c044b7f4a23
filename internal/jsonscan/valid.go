package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// stringStop marks the bytes that end a run of plain string content: the
// quote, the backslash and the control characters JSON forbids raw.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// maxNesting is how deeply encoding/json lets values nest (its scanner's
// maxNestingDepth): deeper text is invalid here too, so that what Valid
// accepts, encoding/json decodes.
const maxNesting = 10000

// Valid reports whether data is one valid JSON value, surrounded by
// optional white space, as encoding/json's Valid does (invalid UTF-8 inside
// strings is accepted there too). It is several times faster: a table-driven
// scan with an explicit stack instead of a state function per byte, which
// matters because every offloaded record is checked.
func Valid(data []byte) bool { return valid(data, nil) }

// maxTopFields is how many members of an object ValidFields returns; a
// wider one is left to Fields.
const maxTopFields = 256

// ValidFields is Valid that also returns the members of data when it is an
// object of at most a few hundred members, as Fields would yield them:
// found in the same pass, so that a caller needs no second one to find
// them. fields is nil for anything else.
func ValidFields(data []byte) (fields []Field, ok bool) {
	tf := &topFields{fields: []Field{}}
	if !valid(data, tf) {
		return nil, false
	}
	if tf.over {
		return nil, true
	}
	return tf.fields, true
}

// topFields collects the members of the outermost object during valid,
// and, when ix is not nil, the elements of the arrays among them or of an
// outermost array.
type topFields struct {
	fields []Field
	over   bool // more than maxTopFields
	key    []byte
	start  int // where the pending member's value starts; -1: none, -2: at the next value
	ix     *indexer
	// depth is how deep valid calls the hooks: the members of the
	// outermost object are at depth 1, the elements of an array among
	// them at 2, and their members at 3 (those of an outermost array, at
	// 1 and 2). Deeper values, most of a result, cost no call.
	depth int
	ascii bool // every byte of a valid text is ASCII
}

func valid(data []byte, tf *topFields) bool {
	var buf [64]byte
	stack := buf[:0] // the closing byte of each open container
	i := 0
	// high gathers the bytes of the strings, eight at a time, and maybe a
	// few bytes beside them: outside strings, a valid text is ASCII, so
	// that it is ASCII if and only if high has no high bit.
	var high uint64
	all := tf // learns that, even when tf has nothing to collect
	if tf != nil {
		tf.start, tf.depth = -1, 1
		if tf.ix != nil {
			tf.depth = 3
		}
		j := skipSpace(data, 0)
		switch {
		case j < len(data) && data[j] == '{':
		case j < len(data) && data[j] == '[' && tf.ix != nil:
			tf.fields = nil // not an object: its elements only
			tf.ix.open(j, 1)
			tf.depth = 2
		default:
			tf.fields, tf = nil, nil // nothing to collect
		}
	}
	for {
		// A value is expected at i.
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		if tf != nil && len(stack) <= tf.depth {
			tf.valueAt(data, i, len(stack))
		}
		ok := true
		switch c := data[i]; { // in order of frequency
		case c == '"':
			var h uint64
			i, h, ok = validString(data, i)
			high |= h
		case c == '-' || c >= '0' && c <= '9':
			i, ok = validNumber(data, i)
		case c == '{':
			if len(stack) >= maxNesting {
				return false // one level deeper than encoding/json takes
			}
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == '}' {
				i++
				break
			}
			stack = append(stack, '}')
			keyAt := i
			var h uint64
			if i, h, ok = member(data, i); !ok {
				return false
			}
			high |= h
			if tf != nil && len(stack) <= tf.depth {
				tf.member(data, keyAt, len(stack))
			}
			continue
		case c == '[':
			if len(stack) >= maxNesting {
				return false
			}
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == ']' {
				i++
				break
			}
			stack = append(stack, ']')
			continue
		case c == 't':
			i, ok = literal(data, i, "true")
		case c == 'f':
			i, ok = literal(data, i, "false")
		case c == 'n':
			i, ok = literal(data, i, "null")
		default:
			return false
		}
		if !ok {
			return false
		}
		// After a value: close containers or move to the next element.
		for {
			if tf != nil && len(stack) <= tf.depth {
				tf.valueEnd(data, i, len(stack))
			}
			i = skipSpace(data, i)
			if len(stack) == 0 {
				if all != nil {
					all.ascii = high&highs == 0
				}
				return i == len(data)
			}
			if i >= len(data) {
				return false
			}
			top := stack[len(stack)-1]
			if data[i] == top {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if data[i] != ',' {
				return false
			}
			i++
			if top == '}' {
				keyAt := skipSpace(data, i)
				var h uint64
				if i, h, ok = member(data, keyAt); !ok {
					return false
				}
				high |= h
				if tf != nil && len(stack) <= tf.depth {
					tf.member(data, keyAt, len(stack))
				}
			}
			break
		}
	}
}

// member notes the member, at depth d, whose key starts at keyAt: its
// value comes next.
func (t *topFields) member(data []byte, keyAt, d int) {
	if d == 1 {
		end := skipString(data, keyAt)
		t.key, t.start = data[keyAt+1:end-1], -2
		return
	}
	if t.ix != nil && t.ix.active {
		t.ix.member(data, keyAt, d)
	}
}

// valueAt notes a value that starts at i, at depth d.
func (t *topFields) valueAt(data []byte, i, d int) {
	if d == 1 && t.start == -2 {
		t.start = i
		if t.ix != nil && data[i] == '[' && !t.over && len(t.fields) < maxTopFields {
			t.ix.open(i, 2)
		}
		return
	}
	if t.ix != nil && t.ix.active {
		t.ix.valueAt(data, i, d)
	}
}

// valueEnd notes that a value at depth d ends at i.
func (t *topFields) valueEnd(data []byte, i, d int) {
	if d == 1 && t.start >= 0 {
		t.add(data, i)
		return
	}
	if t.ix != nil && t.ix.active {
		t.ix.valueEnd(i, d)
	}
}

// add records the pending member, whose value ends at i.
func (t *topFields) add(data []byte, i int) {
	var els []ElementSpan
	if t.ix != nil && t.ix.active {
		els = t.ix.close()
	}
	if len(t.fields) < maxTopFields {
		t.fields = append(t.fields, Field{Key: t.key, Value: data[t.start:i]})
		if t.ix != nil {
			t.ix.arrays = append(t.ix.arrays, els)
		}
	} else {
		t.over = true
	}
	t.start = -1
}

// member checks `"key" :` at i and returns the index after the colon,
// and the key's bytes as validString does.
func member(data []byte, i int) (int, uint64, bool) {
	if i >= len(data) || data[i] != '"' {
		return i, 0, false
	}
	i, h, ok := validString(data, i)
	if !ok {
		return i, h, false
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return i, h, false
	}
	return i + 1, h, true
}

// validString checks the string at i and returns the index after it, and
// its bytes ORed together (with maybe some of the bytes after it), from
// which valid learns whether the text is ASCII.
func validString(data []byte, i int) (int, uint64, bool) {
	i++ // opening quote
	var high uint64
	for {
		if i+8 <= len(data) {
			// Eight bytes at a time while none is a quote, a backslash or
			// a control character (SWAR: a byte of x below n shows in
			// (x - n*0x01..) &^ x & 0x80..; the lowest byte flagged is
			// exact, since only a byte that borrows flags the ones above
			// it): most strings are short, and the first byte flagged
			// ends them.
			w := binary.LittleEndian.Uint64(data[i:])
			q, b := w^(lows*'"'), w^(lows*'\\')
			m := ((w-lows*0x20)&^w | (q-lows)&^q | (b-lows)&^b) & highs
			high |= w
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else {
			for i < len(data) && !stringStop[data[i]] {
				high |= uint64(data[i])
				i++
			}
			if i >= len(data) {
				return i, high, false
			}
		}
		switch data[i] {
		case '"':
			return i + 1, high, true
		case '\\':
			if i+1 >= len(data) {
				return i, high, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return i, high, false
				}
				for _, h := range data[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, high, false
					}
				}
				i += 6
			default:
				return i, high, false
			}
		default: // a raw control character
			return i, high, false
		}
	}
}

func validNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	start := i
	i = digits(data, i)
	if i == start || i-start > 1 && data[start] == '0' {
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

func literal(data []byte, i int, word string) (int, bool) {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}
