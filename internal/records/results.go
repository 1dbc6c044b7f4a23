package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mcplro/lro/internal/jsonscan"
)

// Found is one set of records Found in a tool result, with each record as
// the inline result sends it, so that a truncated result can be rebuilt in
// the shape it had.
type Found struct {
	Src     Source
	Generic bool // lines or items of text: certainly not memories
	lines   bool // one {"line", "text"} record per line of text
	Members bool // the records were `"key":value` members of an object
}

// A Section is a found set at a place in the result.
type Section struct {
	Found
	path   []string // field names from the document's root; nil for the root itself
	Bytes  int      // size of the value the records came from
	fields []string // for the overflow section: the keys (joined paths) of the fields it holds
	Text   bool     // the value was a JSON string, offloaded as lines
}

// Name is the section's path as the descriptor shows it: "data.items",
// cut to maxNameBytes.
func (s *Section) Name() string { return clipName(Dotted(s.path)) }

// key is the section's path as a map key; field names may hold dots.
func (s *Section) key() string { return PathKey(s.path) }

func PathKey(path []string) string { return strings.Join(path, "\x00") }

// indexMark starts a step of a path that is an array's element, not an
// object's member: a JSON text cannot hold a raw control character, so
// no key as written is mistaken for one.
const indexMark = "\x01"

// indexStep is the step of a path to element i of an array.
func indexStep(i int) string { return indexMark + strconv.Itoa(i) }

// Dotted is a path as a descriptor writes it and a policy names it: the
// names joined by dots, an element's index in brackets
// ("data.statements[0].rows").
func Dotted(path []string) string {
	var b strings.Builder
	for i, step := range path {
		if idx, ok := strings.CutPrefix(step, indexMark); ok {
			b.WriteString("[" + idx + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(step)
	}
	return b.String()
}

// A Layout is what a document holds: one or more sections of records (the
// largest, or the one the policy names, first), the small fields beside
// them, and what is needed to rebuild the document with fewer records.
type Layout struct {
	Sections []Section
	Extra    map[string]json.RawMessage // small fields by dotted path
	paths    map[string]string          // dotted path of an extra field: its path key
	Root     []byte                     // the JSON document; nil for text
	Items    bool                       // each record was a content item
	Cursor   string                     // an active pagination cursor field, if any

	scan    int  // the bytes the search may still read (see scanShare)
	noWrap  bool // no array's elements are searched, unless the policy names a path inside them
	wrapped bool // some array's elements were searched
}

// BytesOf views a string's bytes without copying. The engine only reads
// records, so the string's immutability is respected.
func BytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// knownFields are the array fields a result object usually keeps its
// records in, in order of preference when several are large.
var knownFields = []string{"results", "memories", "hits", "items", "records", "data", "rows"}

const (
	// SectionBytes is the size over which a field of a result object is
	// offloaded in a section of its own instead of being copied into the
	// descriptor: about 256 tokens.
	SectionBytes = 1024
	// extraBytes bounds the small fields copied into the descriptor
	// together; fields past it go to a section of their own.
	extraBytes = 1600
	// scanShare bounds the bytes the search for records reads, as a
	// multiple of the result's size: each level searched reads what it
	// holds once more, so a result nested a thousand levels deep costs
	// this, not a thousand times its size. Past it, an object is a
	// section of its members and an array one of its elements.
	scanShare = 8
	// maxWrapped is how many elements an array may have for them to be
	// searched for records (see wrapper).
	maxWrapped = 16
	// maxSearched is how many members an object searched for them may
	// have; a wider one is a map whose members are the records.
	maxSearched = 64
	// maxSections is how many sections, each a file, a result may have:
	// the descriptor lists each, so its size grows with them.
	maxSections = 16
)

// FindLayout finds the records in data: a JSON array, the large fields of
// a JSON object (arrays, nested objects searched for arrays, long
// strings), or, for text that is not JSON, its lines. An array of a few
// objects that each hold an array of records, as a database server's
// statements hold their rows, is searched too: its elements' arrays are
// the records (see wrapper). isJSON says that data is valid JSON (the
// caller has checked), and ix, when not nil, is what checking found of
// its members and arrays. want is the policy's RecordsField, a dotted
// path ("data.statements[0].rows", see Dotted), or "".
func FindLayout(data []byte, isJSON bool, ix *jsonscan.Index, want string) Layout {
	p := bytes.TrimSpace(data)
	if !isJSON || len(p) == 0 {
		return Layout{Sections: []Section{{Found: FromLines(data), Bytes: len(data)}}}
	}
	if ix == nil {
		ix = &jsonscan.Index{}
	}
	switch p[0] {
	case '[':
		l := search(p, ix, want, true)
		if len(l.Sections) > maxSections && l.wrapped {
			l = search(p, ix, want, false)
		}
		if len(l.Sections) > maxSections || len(l.Sections) == 0 {
			return Layout{Root: p, Sections: []Section{{Found: fromArray(p, ix.Root), Bytes: len(p)}}}
		}
		return l
	case '{':
		if want == "" && isTreeObject(p, ix.Fields) {
			return Layout{Sections: []Section{{Found: fromTree(p), Bytes: len(p)}}}
		}
		if want == "" && isMap(p, ix.Fields) {
			// A map from ids to records, not a result object: its members
			// are the records, read in place. Splitting it into fields
			// would cost a map entry and a path a member (two million
			// members of a 29 MB object took 36 times the payload), and
			// a fallback would cut each member's large fields (a hundred
			// users of 2,000 bytes were shown with every long field
			// emptied) where it can show whole members.
			return Layout{Root: p, Sections: []Section{{Found: fromMembers(p), Bytes: len(p)}}}
		}
		l := search(p, ix, want, true)
		if len(l.Sections) > maxSections && l.wrapped {
			// The elements of an array searched made more sections
			// than a descriptor lists: they are the records after all.
			l = search(p, ix, want, false)
		}
		if len(l.Sections) > maxSections {
			// More large fields than one descriptor lists in its
			// bound (900 fields of 1 KB made 900 files and a 130 KB
			// descriptor): the root's members are the records, in one
			// file.
			return Layout{Root: p, Cursor: l.Cursor, Sections: []Section{{Found: fromMembers(p), Bytes: len(p)}}}
		}
		return l
	case '"':
		var s string
		if json.Unmarshal(p, &s) == nil {
			return Layout{Sections: []Section{{Found: FromLines(BytesOf(s)), Bytes: len(p)}}}
		}
	}
	return Layout{Sections: []Section{{Found: FromLines(data), Bytes: len(data)}}}
}

// search lays out p, a JSON object or array, searching the elements of
// arrays that hold records (see wrapper) when wrap says so. A root array
// that holds no such thing is one section, its elements the records.
func search(p []byte, ix *jsonscan.Index, want string, wrap bool) Layout {
	l := Layout{Root: p, scan: scanShare * len(p), noWrap: !wrap}
	if p[0] == '[' {
		els, held := l.wrapper(p, nil, want)
		if els == nil {
			return Layout{Root: p, Sections: []Section{{Found: fromArray(p, ix.Root), Bytes: len(p)}}}
		}
		l.elements(nil, els, held, 1, want)
	} else {
		l.split(p, ix.Fields, ix.Arrays, nil, 0, want)
	}
	if len(l.Sections) <= maxSections {
		l.order(want)
		l.bound()
	}
	return l
}

// split walks an object, whose members are fields when not nil, and the
// elements of those that are arrays arrays[i] when not nil: large fields
// become sections, small ones extra.
func (l *Layout) split(obj []byte, fields []jsonscan.Field, arrays [][]jsonscan.ElementSpan, prefix []string, depth int, want string) {
	each := func(yield func(int, jsonscan.Field) bool) {
		if fields == nil {
			i := 0
			_ = jsonscan.Fields(obj, func(f jsonscan.Field) bool { i++; return yield(i-1, f) })
			return
		}
		for i, f := range fields {
			if !yield(i, f) {
				return
			}
		}
	}
	each(func(i int, kv jsonscan.Field) bool {
		if depth == 0 && l.Cursor == "" && isActiveCursor(string(kv.Key), kv.Value) {
			l.Cursor = string(kv.Key)
		}
		var els []jsonscan.ElementSpan
		if fields != nil && i < len(arrays) {
			els = arrays[i]
		}
		l.member(append(slices.Clip(prefix), string(kv.Key)), kv.Value, els, nil, depth, want)
		return true
	})
}

// member lays out v, the value at path: a large array is a section (or,
// holding records in its few elements, is searched), a large object is
// searched (or, too wide or too costly to search, a section of its
// members), a long string a section of lines, anything else a field
// copied. els, when not nil, are the elements of an array v, and fields
// the members of an object v.
func (l *Layout) member(path []string, v []byte, els []jsonscan.ElementSpan, fields []jsonscan.Field, depth int, want string) {
	named := want != "" && Dotted(path) == want
	if len(v) <= SectionBytes && !named && !towards(path, want) {
		l.AddExtra(path, v)
		return
	}
	switch v[0] {
	case '[':
		if !named {
			if inner, held := l.wrapper(v, path, want); inner != nil {
				l.elements(path, inner, held, depth+1, want)
				return
			}
		}
		l.Sections = append(l.Sections, Section{Found: fromArray(v, els), path: path, Bytes: len(v)})
	case '{':
		if !named && fields == nil && (towards(path, want) || l.afford(len(v))) {
			fields = fieldsOf(v)
		}
		if !named && fields != nil {
			l.split(v, fields, nil, path, depth+1, want)
			return
		}
		l.Sections = append(l.Sections, Section{Found: fromMembers(v), path: path, Bytes: len(v)})
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			l.AddExtra(path, v)
			return
		}
		l.Sections = append(l.Sections, Section{Found: FromLines(BytesOf(s)), path: path, Bytes: len(v), Text: true})
	default:
		l.AddExtra(path, v)
	}
}

// elements lays out the elements of an array at path that wrapper
// returned: each is searched as a member is when they hold records;
// otherwise the policy's path alone is, and the other elements are fields.
func (l *Layout) elements(path []string, els []element, held bool, depth int, want string) {
	for i, el := range els {
		p := append(slices.Clip(path), indexStep(i))
		if !held && !towards(p, want) && Dotted(p) != want {
			l.AddExtra(p, el.value)
			continue
		}
		l.member(p, el.value, nil, el.fields, depth, want)
	}
}

// towards reports whether want names a path below path.
func towards(path []string, want string) bool {
	if want == "" {
		return false
	}
	d := Dotted(path)
	return strings.HasPrefix(want, d) && len(want) > len(d) && (want[len(d)] == '.' || want[len(d)] == '[')
}

// afford takes n bytes from what the search may still read, and reports
// whether there were that many left.
func (l *Layout) afford(n int) bool {
	if l.scan < n {
		return false
	}
	l.scan -= n
	return true
}

// An element is one element of an array searched, and its members when
// it is an object.
type element struct {
	value  []byte
	fields []jsonscan.Field
}

// wrapper returns the elements of arr, an array at path, and held true
// when they hold records rather than being records: when arr has at most
// maxWrapped elements, each an object of at most maxSearched members, arr
// is not a tree, and the large arrays of objects or arrays among the
// elements' members hold at least three quarters of arr's bytes. A SQL
// server's answer {"statements": [{"sql": …, "rows": [50,000 rows],
// "count": 50000}]} holds its rows so, one statement an element; so do
// the series of a time-series query. An array of records that have large
// arrays of their own is not one as long as it has more elements than
// that. When want names a path inside an element, the elements are
// returned whatever they hold (held false when they are records). It
// returns nil otherwise.
func (l *Layout) wrapper(arr []byte, path []string, want string) (els []element, held bool) {
	toWant := towards(path, want)
	n := 0
	_ = jsonscan.EachElement(arr, func([]byte) bool { n++; return toWant || n <= maxWrapped })
	held = !l.noWrap && n > 0 && n <= maxWrapped && len(arr) > SectionBytes
	if !toWant && (!held || !l.afford(2*len(arr)) || isTree(arr)) {
		return nil, false
	}
	held = held && !isTree(arr)
	els = make([]element, 0, n)
	records := 0 // bytes of the elements' large arrays of records
	_ = jsonscan.EachElement(arr, func(el []byte) bool {
		e := element{value: el}
		if len(el) > 0 && el[0] == '{' {
			e.fields = fieldsOf(el)
		}
		held = held && e.fields != nil
		for _, f := range e.fields {
			if isLargeArray(f.Value) && holdsContainers(f.Value) {
				records += len(f.Value)
			}
		}
		els = append(els, e)
		return toWant || held
	})
	held = held && int64(records)*4 >= int64(len(arr))*3
	if !toWant && !held {
		return nil, false
	}
	l.wrapped = l.wrapped || held
	return els, held
}

// holdsContainers reports whether arr, an array, begins with an object or
// an array: records, not a list of numbers or names.
func holdsContainers(arr []byte) bool {
	first := false
	_ = jsonscan.EachElement(arr, func(el []byte) bool {
		first = len(el) > 0 && (el[0] == '{' || el[0] == '[')
		return false
	})
	return first
}

// fieldsOf returns the members of obj, or nil when it has more than
// maxSearched (a map from ids to records rather than a result object,
// whose members are records) or none.
func fieldsOf(obj []byte) []jsonscan.Field {
	var fields []jsonscan.Field
	_ = jsonscan.Fields(obj, func(f jsonscan.Field) bool {
		fields = append(fields, f)
		return len(fields) <= maxSearched
	})
	if len(fields) > maxSearched {
		return nil
	}
	return fields
}

// isMap reports whether obj, whose members are fields when not nil, is
// wide and none of its members is a large array: a map whose members are
// the records, not a result object whose records are an array beside
// many small fields.
func isMap(obj []byte, fields []jsonscan.Field) bool {
	if fields == nil {
		n, records := 0, true
		_ = jsonscan.Fields(obj, func(f jsonscan.Field) bool {
			n++
			records = !isLargeArray(f.Value)
			return records
		})
		return records && n > maxSearched
	}
	if len(fields) <= maxSearched {
		return false
	}
	for _, f := range fields {
		if isLargeArray(f.Value) {
			return false
		}
	}
	return true
}

// isLargeArray reports whether v is an array that would be a section of
// its own.
func isLargeArray(v []byte) bool { return len(v) > SectionBytes && v[0] == '[' }

func (l *Layout) AddExtra(path []string, v []byte) {
	if l.Extra == nil {
		l.Extra, l.paths = map[string]json.RawMessage{}, map[string]string{}
	}
	dotted := Dotted(path)
	l.Extra[dotted], l.paths[dotted] = v, PathKey(path)
}

// order puts the main section first: the one the policy names, else the
// largest, a known records field winning among sections of a similar size.
func (l *Layout) order(want string) {
	rank := func(s *Section) int {
		if want != "" && Dotted(s.path) == want {
			return 1 << 62
		}
		r := s.Bytes
		if len(s.path) == 1 && slices.Contains(knownFields, s.path[0]) {
			r += r / 4
		}
		return r
	}
	slices.SortStableFunc(l.Sections, func(a, b Section) int { return rank(&b) - rank(&a) })
}

// bound keeps the fields copied into the descriptor small: past
// extraBytes together, the largest move to a section of their own, one
// {"field", "value"} record each. An object of only small fields is all
// such a section.
func (l *Layout) bound() {
	total := 0
	for _, v := range l.Extra {
		total += len(v)
	}
	if total <= extraBytes && len(l.Sections) > 0 {
		return
	}
	keys := make([]string, 0, len(l.Extra))
	for k := range l.Extra {
		keys = append(keys, k)
	}
	// Largest first, so that as few fields as possible leave the summary.
	slices.SortFunc(keys, func(a, b string) int {
		if d := len(l.Extra[b]) - len(l.Extra[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	s := Section{path: []string{"fields"}}
	var recs Slice
	for _, k := range keys {
		if total <= extraBytes && len(l.Sections) > 0 {
			break
		}
		v := l.Extra[k]
		total -= len(v)
		delete(l.Extra, k)
		s.fields = append(s.fields, l.paths[k])
		name, _ := MarshalText(k)
		rec := append(append(append([]byte(`{"field":`), name...), `,"value":`...), v...)
		recs.Lines = append(recs.Lines, append(rec, '}'))
		recs.Sent = append(recs.Sent, v)
		s.Bytes += len(v)
	}
	if len(recs.Lines) > 0 {
		s.Found = Found{Src: recs, Generic: true}
		l.Sections = append(l.Sections, s)
	}
}

// isActiveCursor reports whether a top-level field says more pages follow.
func isActiveCursor(key string, v []byte) bool {
	switch key {
	case "next_cursor", "nextCursor", "cursor", "next_page_token", "nextPageToken", "next_page", "nextPage":
		return len(v) > 0 && string(v) != "null" && string(v) != `""` && string(v) != "false"
	case "has_more", "hasMore":
		return string(v) == "true"
	}
	return false
}

// fromArray finds the records of a JSON array: its elements, or the
// memories of search hits. els, when not nil, are its elements, found
// while validating it.
func fromArray(data []byte, els []jsonscan.ElementSpan) Found {
	if isTree(data) {
		return fromTree(data)
	}
	return Found{Src: newArrayRecords(data, els)}
}

// fromTree makes one record of each node of a tree (see treeRecords).
func fromTree(data []byte) Found {
	return Found{Src: newTreeRecords(data), Generic: true}
}

// fromMembers makes one {"key", "value"} record of each member of an
// object too deep or too wide to search: a map from ids to records.
func fromMembers(obj []byte) Found {
	return Found{Src: newMemberRecords(obj), Generic: true, Members: true}
}

// FromLines offloads text as one {"line", "text"} object per line.
func FromLines(text []byte) Found {
	return Found{Src: newLineRecords(text), Generic: true, lines: true}
}

// FromItems makes one record of each content item: the item itself when
// every item is JSON, else {"item", "text"}.
func FromItems(texts []string) Found {
	var recs Slice
	allJSON := true
	for _, t := range texts {
		if !LooksJSON(t) || !jsonscan.Valid(BytesOf(t)) {
			allJSON = false
			break
		}
	}
	for i, t := range texts {
		recs.Sent = append(recs.Sent, BytesOf(t))
		if allJSON {
			recs.Lines = append(recs.Lines, bytes.TrimSpace(BytesOf(t)))
			continue
		}
		rec := strconv.AppendInt([]byte(`{"item":`), int64(i+1), 10)
		rec = jsonscan.AppendQuoted(append(rec, `,"text":`...), BytesOf(t))
		recs.Lines = append(recs.Lines, append(rec, '}'))
	}
	return Found{Src: recs, Generic: true}
}

// WithoutStated returns the fields of extra that do not repeat what the
// summary already says: a field named like a summary field (see
// OffloadSummary.stated), or whose path ends in such a name
// ("data.statements[0].count"), with the same JSON value is left out, so
// that a tool's own "count" of the records it returned does not appear
// twice.
// A field with another value stays: a total of 742 beside a count of 200
// is news. It returns nil when nothing is left.
func WithoutStated(extra map[string]json.RawMessage, stated map[string]any) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range extra {
		name := k[strings.LastIndexByte(k, '.')+1:]
		if s, ok := stated[name]; ok && sameJSON(v, s) {
			continue
		}
		if out == nil {
			out = make(map[string]json.RawMessage, len(extra))
		}
		out[k] = v
	}
	return out
}

// sameJSON reports whether raw, a JSON value, is the JSON encoding of v up
// to white space and number spelling (200 and 200.0 are the same).
func sameJSON(raw json.RawMessage, v any) bool {
	var a, b any
	enc, err := json.Marshal(v)
	if err != nil || json.Unmarshal(raw, &a) != nil || json.Unmarshal(enc, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// CheckPath reports whether p is a path as Dotted writes it: names
// joined by dots, an element's index in brackets after a name or at the
// start ("data.statements[0].rows", "[0].rows"). A name cannot hold a dot
// or an opening bracket.
func CheckPath(p string) error {
	rest := p
	name := true // a name may come next (at the start, or after a dot)
	for rest != "" {
		switch {
		case rest[0] == '[':
			if name && len(rest) < len(p) {
				return fmt.Errorf("path %q: a name, not a bracket, after a dot", p)
			}
			end := strings.IndexByte(rest, ']')
			if end < 2 {
				return fmt.Errorf("path %q: want an element's index in brackets, such as [0]", p)
			}
			if _, err := strconv.ParseUint(rest[1:end], 10, 31); err != nil {
				return fmt.Errorf("path %q: %q is not an element's index", p, rest[1:end])
			}
			rest, name = rest[end+1:], false
		case rest[0] == '.':
			if name {
				return fmt.Errorf("path %q: an empty name", p)
			}
			rest, name = rest[1:], true
			if rest == "" {
				return fmt.Errorf("path %q: an empty name at the end", p)
			}
		case name:
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			rest, name = rest[end:], false
		default:
			return fmt.Errorf("path %q: want a dot or a bracket after %q", p, p[:len(p)-len(rest)])
		}
	}
	if p == "" {
		return fmt.Errorf("the path is empty")
	}
	return nil
}
