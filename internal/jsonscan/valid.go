package jsonscan

import (
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
// strings is accepted there too). It is several times faster: a state
// machine over tokens, not a state function per byte, that reads strings
// eight bytes at a time, which matters because every offloaded record is
// checked.
func Valid(data []byte) bool { return valid(data, nil) }

// Facts are what ValidFacts learns of a valid text besides its validity.
type Facts struct {
	// ASCII says that every byte of the text is ASCII: its length is
	// then its number of characters.
	ASCII bool
	// Newline says that the text holds a raw line break. In valid JSON
	// that can only be white space between tokens, which must go before
	// the text can be one line of a JSONL file.
	Newline bool
	// Value is the value of the member of the outermost object named by
	// the key given to ValidFacts, as Lookup returns it: nil when there is
	// no such member, or no key.
	Value []byte
}

// ValidFacts is Valid that also returns the Facts of data when it is
// valid, learned in the same pass: whoever writes records as JSONL lines
// then needs no other pass over a record to estimate it, to look for
// line breaks in it, or to find the one member it reads (key; "" for
// none, and one without quotes or backslashes).
func ValidFacts(data []byte, key string) (Facts, bool) {
	sc := scanner{hooks: -1, find: -1, found: -1}
	if key != "" {
		sc.key, sc.find = key, 1
	}
	if !sc.valid(data, nil) {
		return Facts{}, false
	}
	f := Facts{ASCII: sc.high&highs == 0, Newline: sc.newline}
	if sc.found >= 0 {
		i := skipSpace(data, sc.found)
		f.Value = data[i:skipValue(data, i)]
	}
	return f, true
}

// maxTopFields is how many members of an object ValidFields returns; a
// wider one is left to Fields.
const maxTopFields = 256

// ValidFields is Valid that also returns the members of data when it is an
// object of at most a few hundred members, as Fields would yield them:
// found in the same pass, so that a caller needs no second one to find
// them. fields is nil for anything else.
func ValidFields(data []byte) (fields []Field, ok bool) {
	return AppendValidFields([]Field{}, data)
}

// AppendValidFields is ValidFields appending the members to dst[:0], so
// that a caller checking many records reuses one slice.
func AppendValidFields(dst []Field, data []byte) (fields []Field, ok bool) {
	tf := topFields{fields: dst[:0]}
	if !valid(data, &tf) {
		return dst[:0], false
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

// valid is Valid that, when tf is not nil, also collects in it what
// ValidFields and ValidIndex return.
func valid(data []byte, tf *topFields) bool {
	sc := scanner{hooks: -1, find: -1}
	all := tf // learns whether the text is ASCII, even when tf has nothing to collect
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
		if tf != nil {
			sc.hooks = tf.depth
		}
	}
	if !sc.valid(data, tf) {
		return false
	}
	if all != nil {
		all.ascii = sc.high&highs == 0
	}
	return true
}

// scanner is the state of valid that most tokens do not touch: it lives
// in memory, so that the registers hold what they do (see scanner.valid).
type scanner struct {
	hooks int // valid calls tf for what is at this depth or above; -1: none
	at    int // where the key of the member being read is
	// find is the depth (1, or -1 for none) of the members among which
	// valid looks for the one named key; found is where the value of the
	// first one starts (-1: none yet).
	find, found int
	key         string
	// high gathers the bytes of the strings that are not plain ASCII, as
	// validString finds them, and maybe a few bytes beside them: outside
	// strings, a valid text is ASCII, so that it is ASCII if and only if
	// high has no high bit.
	high uint64
	// outer has a bit for each open container but the innermost, set for
	// an object: the first 64 here, deeper ones in deep, which a usual
	// text never needs.
	outer   uint64
	deep    []uint64
	newline bool // white space held a line break
}

// valid is a state machine over three states, the labels below: a
// member's key is expected at i, a value is, or a value just ended. Its
// registers hold only what most tokens need: the text, i, how many
// containers are open and whether the innermost is an object.
func (sc *scanner) valid(data []byte, tf *topFields) bool {
	k := plainConsts
	var (
		i, depth int
		obj      bool
		c        byte
		ok       bool
		h        uint64
	)
	goto value

member:
	if i >= len(data) || data[i] != '"' {
		if i = sc.space(data, i); i >= len(data) || data[i] != '"' {
			return false
		}
	}
key: // a key starts at i
	sc.at = i
	// Strings, keys and values alike, are scanned where they are, not in
	// a call, which would cost more than most strings: eight bytes at a
	// time while all are plain ASCII (see plainMasks), the rest, from the
	// first byte that is not, in validString.
	for i++; i+8 <= len(data); i += 8 {
		if m := k.stops(load64(data, i)); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			break
		}
	}
	if i+2 <= len(data) && string(data[i:i+2]) == `":` {
		i += 2 // the usual end of a key, at once
	} else {
		if i < len(data) && data[i] == '"' {
			i++
		} else { // an escape, a control character, other than ASCII, the last bytes
			if i, h, ok = validString(data, i); !ok {
				return false
			}
			sc.high |= h
		}
		if i = sc.space(data, i); i >= len(data) || data[i] != ':' {
			return false
		}
		i++
	}
	if depth == sc.find {
		sc.match(data, i)
	}
	if depth <= sc.hooks {
		tf.member(data, sc.at, depth)
	}

value:
	if i >= len(data) {
		return false
	}
	if c = data[i]; c <= ' ' {
		if i = sc.space(data, i); i >= len(data) {
			return false
		}
		c = data[i]
	}
	if depth <= sc.hooks {
		tf.valueAt(data, i, depth)
	}
	switch { // in order of frequency
	case c == '"':
		for i++; i+8 <= len(data); i += 8 {
			if m := k.stops(load64(data, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
		}
		if i < len(data) && data[i] == '"' {
			i++
			break
		}
		if i, h, ok = validString(data, i); !ok {
			return false
		}
		sc.high |= h
	case c == '-' || c >= '0' && c <= '9':
		if i, ok = ValidNumber(data, i); !ok {
			return false
		}
	case c == '{' || c == '[':
		if depth >= maxNesting {
			return false // one level deeper than encoding/json takes
		}
		if i = sc.space(data, i+1); i < len(data) && data[i] == c+2 { // '}' or ']'
			i++
			break
		}
		sc.push(depth, obj)
		depth++
		if obj = c == '{'; obj {
			goto member
		}
		goto value
	case c == 't' && hasWord(data, i, "true"):
		i += len("true")
	case c == 'f' && hasWord(data, i, "false"):
		i += len("false")
	case c == 'n' && hasWord(data, i, "null"):
		i += len("null")
	default:
		return false
	}

next: // a value ends at i: close containers or move to the next element
	if depth <= sc.hooks {
		tf.valueEnd(data, i, depth)
	}
	if i+2 <= len(data) && string(data[i:i+2]) == `,"` && obj {
		i++
		goto key // the usual next member, at once
	}
	if i < len(data) && data[i] <= ' ' {
		i = sc.space(data, i)
	}
	if depth == 0 {
		return i == len(data)
	}
	if i >= len(data) {
		return false
	}
	c = data[i]
	i++
	switch {
	case c == ',' && obj:
		goto member
	case c == ',':
		goto value
	case obj && c != '}' || !obj && c != ']':
		return false
	}
	depth--
	obj = sc.pop(depth)
	goto next
}

// match notes that the value of the member whose key is at sc.at starts
// at i, if that key is sc.key and none was found before.
func (sc *scanner) match(data []byte, i int) {
	k := sc.at + 1
	if sc.found < 0 && k+len(sc.key) < len(data) && data[k+len(sc.key)] == '"' &&
		string(data[k:k+len(sc.key)]) == sc.key {
		sc.found = i
	}
}

// push notes, as a container opens inside the d open ones, whether the
// innermost of those is an object.
func (sc *scanner) push(d int, obj bool) {
	if d < 64 {
		sc.outer = sc.outer&^(1<<d) | b2u(obj)<<d
		return
	}
	sc.pushDeep(d-64, obj)
}

func (sc *scanner) pushDeep(d int, obj bool) {
	if d/64 >= len(sc.deep) {
		sc.deep = append(sc.deep, 0)
	}
	sc.deep[d/64] = sc.deep[d/64]&^(1<<(d%64)) | b2u(obj)<<(d%64)
}

// pop returns, as a container closes, leaving d open, whether the
// innermost of those is an object.
func (sc *scanner) pop(d int) bool {
	if d < 64 {
		return sc.outer>>d&1 != 0
	}
	d -= 64
	return sc.deep[d/64]>>(d%64)&1 != 0
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// space is skipSpace for valid, which learns on the way whether white
// space holds a line break.
func (sc *scanner) space(data []byte, i int) int {
	if i < len(data) && data[i] > ' ' {
		return i // the usual case: compact JSON
	}
	return sc.spaceFrom(data, i)
}

func (sc *scanner) spaceFrom(data []byte, i int) int {
	for ; i < len(data); i++ {
		switch data[i] {
		case ' ', '\t':
		case '\n', '\r':
			sc.newline = true
		default:
			return i
		}
	}
	return i
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

// stops flags, in the high bit of each byte of w, the bytes that end a
// run of plain string content: a quote, a backslash or a control
// character. It is SWAR: a byte x below n shows in (x - n*0x01..) &^ x &
// 0x80.., and only the lowest byte flagged is sure to be one (a byte that
// borrows may flag the one above it), the one a scan stops at. Flipping
// bit 1 maps the controls onto themselves and the quote onto 0x20, so
// that one test, below 0x21, finds both; x^2 and x^'\\' have the high bit
// of x, so that one &^ w serves both tests.
func stops(w uint64) uint64 {
	y, b := w^(lows*0x02), w^(lows*'\\')
	return ((y - lows*0x21) | (b - lows)) &^ w & highs
}

// plainMasks flags, as stops does, the bytes that end a run of plain
// ASCII string content: those stops flags, and those that are not ASCII
// (| w instead of &^ w; the lowest byte flagged is still exact, since such
// a byte borrows nothing). A scan that leaves each string's first byte
// that is not plain ASCII to validString needs no more: the bytes it
// passes over need not be gathered to learn whether the text is ASCII.
//
// Its constants are fields, not constants: the compiler would load each
// into a register again for every eight bytes.
type plainMasks struct{ x02, x5c, x21, x01, x80 uint64 }

var plainConsts = plainMasks{lows * 0x02, lows * '\\', 1<<64 - lows*0x21, 1<<64 - lows, highs}

func (k *plainMasks) stops(w uint64) uint64 {
	return ((w ^ k.x02 + k.x21) | (w ^ k.x5c + k.x01) | w) & k.x80
}

// load64 returns the eight bytes of b from i, little-endian, as one load:
// binary.LittleEndian.Uint64(b[i:]) compiles to several more
// instructions, which count in a scan of short strings.
func load64(b []byte, i int) uint64 {
	b = b[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// validString checks the rest of a string from i, inside it, and returns
// the index after it, and its bytes from i ORed together (with maybe some
// of the bytes after it), from which valid learns whether the text is
// ASCII. It is where a scan goes on from the first byte that is not
// plain ASCII: an escape, a control character, other than ASCII.
func validString(data []byte, i int) (int, uint64, bool) {
	var high uint64
	for {
		if i+8 <= len(data) {
			// Eight bytes at a time while none stops the string.
			w := load64(data, i)
			high |= w
			if m := stops(w); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
			} else {
				i += 8
				continue
			}
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

// ValidNumber checks the number that starts at data[i], a '-' or a
// digit, as JSON writes numbers (no leading zeros, a fraction and an
// exponent each with digits), and returns the index after it.
func ValidNumber(data []byte, i int) (int, bool) {
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

// hasWord reports whether word is at data[i:].
func hasWord(data []byte, i int, word string) bool {
	return len(data)-i >= len(word) && string(data[i:i+len(word)]) == word
}
