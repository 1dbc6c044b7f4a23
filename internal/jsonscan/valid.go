package jsonscan

import "encoding/binary"

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

// topFields collects the members of the outermost object during valid.
type topFields struct {
	fields []Field
	over   bool // more than maxTopFields
	key    []byte
	start  int // where the pending member's value starts; -1: none, -2: at the next value
}

func valid(data []byte, tf *topFields) bool {
	var buf [64]byte
	stack := buf[:0] // the closing byte of each open container
	i := 0
	if tf != nil {
		tf.start = -1
		if j := skipSpace(data, 0); j >= len(data) || data[j] != '{' {
			tf.fields, tf = nil, nil // not an object: nothing to collect
		}
	}
	for {
		// A value is expected at i.
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		if tf != nil && tf.start == -2 {
			tf.start = i
		}
		ok := true
		switch c := data[i]; {
		case c == '{':
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == '}' {
				i++
				break
			}
			stack = append(stack, '}')
			keyAt := i
			if i, ok = member(data, i); !ok {
				return false
			}
			if tf != nil && len(stack) == 1 {
				tf.pending(data, keyAt, i)
			}
			continue
		case c == '[':
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == ']' {
				i++
				break
			}
			stack = append(stack, ']')
			continue
		case c == '"':
			i, ok = validString(data, i)
		case c == '-' || c >= '0' && c <= '9':
			i, ok = validNumber(data, i)
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
			if tf != nil && len(stack) == 1 && tf.start >= 0 {
				tf.add(data, i)
			}
			i = skipSpace(data, i)
			if len(stack) == 0 {
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
				if i, ok = member(data, keyAt); !ok {
					return false
				}
				if tf != nil && len(stack) == 1 {
					tf.pending(data, keyAt, i)
				}
			}
			break
		}
	}
}

// pending notes the member whose key starts at keyAt and whose colon ends
// before i: its value comes next.
func (t *topFields) pending(data []byte, keyAt, i int) {
	end := skipString(data, keyAt)
	t.key, t.start = data[keyAt+1:end-1], -2
}

// add records the pending member, whose value ends at i.
func (t *topFields) add(data []byte, i int) {
	if len(t.fields) < maxTopFields {
		t.fields = append(t.fields, Field{Key: t.key, Value: data[t.start:i]})
	} else {
		t.over = true
	}
	t.start = -1
}

// member checks `"key" :` at i and returns the index after the colon.
func member(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	i, ok := validString(data, i)
	if !ok {
		return i, false
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return i, false
	}
	return i + 1, true
}

func validString(data []byte, i int) (int, bool) {
	i++ // opening quote
	for {
		// Eight bytes at a time while none is a quote, a backslash or a
		// control character (SWAR: a byte of x below n shows in
		// (x - n*0x01..) &^ x & 0x80..; a false alarm only ends the fast
		// loop early).
		for i+8 <= len(data) {
			w := binary.LittleEndian.Uint64(data[i:])
			q, b := w^(lows*'"'), w^(lows*'\\')
			if ((w-lows*0x20)&^w|(q-lows)&^q|(b-lows)&^b)&highs != 0 {
				break
			}
			i += 8
		}
		for i < len(data) && !stringStop[data[i]] {
			i++
		}
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(data) {
				return i, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return i, false
				}
				for _, h := range data[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		default: // a raw control character
			return i, false
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
