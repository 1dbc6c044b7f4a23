package structq

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcplro/lro/internal/jsonscan"
)

// FieldsError reports fields of a question that no record has: a
// question over them would answer 0 or null and mean a typo. Its
// message names each field and the argument that names it, and, once
// the caller has read the records' Shape, lists the fields they do have
// and the closest to each missing one.
type FieldsError struct {
	Missing []string // the fields no record has
	Args    []string // the argument naming each: "where[0].field"
	Records int      // how many records the question read
	Shape   *Shape   // the records' fields, when the caller read them
}

func (e *FieldsError) Error() string {
	var b strings.Builder
	b.WriteString("no record has the field")
	if len(e.Missing) > 1 {
		b.WriteString("s")
	}
	for i, f := range e.Missing {
		switch {
		case i == 0:
			b.WriteString(" ")
		case i == len(e.Missing)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", strconv.Quote(f), e.Args[i])
	}
	fmt.Fprintf(&b, " among the %d records", e.Records)
	sh := e.Shape
	switch {
	case sh == nil:
		b.WriteString("; ask with the fields of the descriptor's line_schema.")
		return b.String()
	case len(sh.Fields) == 0 && len(sh.Kinds) > 0:
		fmt.Fprintf(&b, "; the records are %s, not objects: a field names nothing in them; use grep, or a query over each record (.)", sh.kinds())
		return b.String() + "."
	case len(sh.Fields) == 0:
		return b.String() + "."
	}
	b.WriteString("; the records' fields")
	if sh.Partial {
		fmt.Fprintf(&b, " (of the first %d)", sh.Records)
	}
	b.WriteString(": ")
	arrays := false
	for i, f := range sh.Fields {
		if i == maxListedFields {
			fmt.Fprintf(&b, ", and %d more", len(sh.Fields)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Path)
		if f.Kind == "array" {
			b.WriteString(" (array)")
			arrays = true
		}
	}
	if len(sh.Kinds) > 0 {
		fmt.Fprintf(&b, "; some records are %s, not objects", sh.kinds())
	}
	b.WriteString(".")
	for _, f := range e.Missing {
		if c := sh.closest(f); c != "" {
			fmt.Fprintf(&b, " Did you mean %s for %s?", strconv.Quote(c), strconv.Quote(f))
		}
	}
	if arrays {
		b.WriteString(" A dotted path reaches into objects, not into the elements of arrays (use a query for those).")
	}
	return b.String()
}

// maxListedFields bounds the fields a FieldsError lists.
const maxListedFields = 40

// fieldsInOrder lists the fields of s in the order of its arguments:
// where, select, sort, aggregate, group_by.
func (s *Spec) fieldsInOrder() []string {
	var out []string
	for _, c := range s.Where {
		out = append(out, c.Field)
	}
	out = append(out, s.Select...)
	if s.Sort != nil {
		out = append(out, s.Sort.Field)
	}
	if s.Aggregate != nil && s.Aggregate.Field != "" {
		out = append(out, s.Aggregate.Field)
	}
	if s.GroupBy != "" {
		out = append(out, s.GroupBy)
	}
	return out
}

// argOf names the argument that names field f.
func (s *Spec) argOf(f string) string {
	for i, c := range s.Where {
		if c.Field == f {
			return fmt.Sprintf("where[%d].field", i)
		}
	}
	for i, x := range s.Select {
		if x == f {
			return fmt.Sprintf("select[%d]", i)
		}
	}
	switch {
	case s.Sort != nil && s.Sort.Field == f:
		return "sort.field"
	case s.Aggregate != nil && s.Aggregate.Field == f:
		return "aggregate.field"
	}
	return "group_by"
}

// Shape is what the first records of a file hold: the dotted paths of
// their objects' fields, and how many records are not objects.
type Shape struct {
	Records int            // records read
	Fields  []FieldShape   // in the order first met, at most maxShapeFields
	Kinds   map[string]int // records that are not objects, by kind
	Partial bool           // the records read are not all of them
	seen    map[string]bool
}

// FieldShape is a field of Shape: its dotted path and the kind of the
// first value met there (object, array, string, number, boolean, null).
type FieldShape struct {
	Path string
	Kind string
}

// Bounds of ReadShape.
const (
	maxShapeFields  = 500
	maxShapeRecords = 1000
)

// ReadShape reads the shape of the JSONL records r holds (the lines after
// the header), of the first maxShapeRecords at most, and as many as r
// gives: a caller bounds r (a record cut short still gives the fields it
// got to). The records are an offloaded file's, valid JSON, scanned
// without decoding (a decoder's tokens take 30 times as long). Arrays'
// elements are not listed: a path does not reach into them.
func ReadShape(r io.Reader) *Shape {
	sh := &Shape{Kinds: map[string]int{}, seen: map[string]bool{}}
	br := bufio.NewReaderSize(r, 64<<10)
	for sh.Records < maxShapeRecords {
		line, err := br.ReadBytes('\n')
		valid := true
		if line = bytes.TrimSpace(line); len(line) > 0 {
			kind := ""
			if valid = err == nil || json.Valid(line); valid {
				kind = sh.walk(line, "", 0)
			} else {
				// Cut short: the fields its tokens give.
				kind, _ = sh.walkTokens(json.NewDecoder(bytes.NewReader(line)), "", 0)
			}
			if kind != "object" && kind != "" {
				sh.Kinds[kind]++
			}
			sh.Records++
		}
		if err != nil {
			// The end of r: the file's, or the caller's bound.
			sh.Partial = !errors.Is(err, io.EOF) || !valid
			return sh
		}
	}
	sh.Partial = true
	return sh
}

// walk returns the kind of the value data starts with, listing the fields
// of an object at prefix (the top level: ""), each before its own
// fields, to maxPathSteps deep.
func (sh *Shape) walk(data []byte, prefix string, depth int) string {
	kind := kindOf(data)
	if kind != "object" || depth >= maxPathSteps {
		return kind
	}
	_ = jsonscan.Fields(data, func(kv jsonscan.Field) bool {
		key := string(kv.Key)
		if bytes.IndexByte(kv.Key, '\\') >= 0 {
			_ = json.Unmarshal([]byte(`"`+key+`"`), &key) // as written, if not valid
		}
		p := key
		if prefix != "" {
			p = prefix + "." + key
		}
		if !sh.seen[p] && len(sh.Fields) < maxShapeFields {
			sh.seen[p] = true
			sh.Fields = append(sh.Fields, FieldShape{Path: p, Kind: kindOf(kv.Value)})
		}
		sh.walk(kv.Value, p, depth+1)
		return true
	})
	return kind
}

// walkTokens is walk over a decoder's tokens, for a record cut short: it
// lists the fields it meets until the cut.
func (sh *Shape) walkTokens(dec *json.Decoder, prefix string, depth int) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", err
	}
	d, ok := t.(json.Delim)
	switch {
	case !ok:
		return kindOf(jsonText(t)), nil
	case d == '[':
		for dec.More() {
			if _, err := sh.walkTokens(dec, "", maxPathSteps); err != nil {
				return "array", err
			}
		}
		_, err := dec.Token()
		return "array", err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "object", err
		}
		p, _ := k.(string)
		if prefix != "" {
			p = prefix + "." + p
		}
		at := len(sh.Fields)
		track := depth < maxPathSteps && !sh.seen[p] && len(sh.Fields) < maxShapeFields
		if track {
			sh.seen[p] = true
			sh.Fields = append(sh.Fields, FieldShape{Path: p})
		}
		kind, err := sh.walkTokens(dec, p, depth+1)
		if track {
			sh.Fields[at].Kind = kind
		}
		if err != nil {
			return "object", err
		}
	}
	_, err = dec.Token()
	return "object", err
}

// kindOf names the kind of the JSON value data starts with.
func kindOf(data []byte) string {
	if len(data) == 0 {
		return "null"
	}
	switch data[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// kinds lists the kinds of the records that are not objects: "strings",
// "numbers and strings".
func (sh *Shape) kinds() string {
	var names []string
	for _, k := range []string{"array", "string", "number", "boolean", "null"} {
		if sh.Kinds[k] > 0 {
			names = append(names, map[string]string{"array": "arrays", "string": "strings", "number": "numbers", "boolean": "booleans", "null": "null"}[k])
		}
	}
	switch len(names) {
	case 0:
		return "not objects"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// closest returns the field of sh nearest to f, or "": the same name in
// another case, the same last key at another depth ("status" for
// "order.status"), or the fewest edits (a swap of neighbours is one),
// at most a quarter of f's length ("stauts", "staus": "status"; not
// "count" for "amount").
func (sh *Shape) closest(f string) string {
	lf := strings.ToLower(f)
	last := lf[strings.LastIndexByte(lf, '.')+1:]
	best, bestD := "", max(1, len(f)/4)+1
	for _, c := range sh.Fields {
		lc := strings.ToLower(c.Path)
		var d int
		switch {
		case lc == lf:
			return c.Path
		case lc[strings.LastIndexByte(lc, '.')+1:] == last:
			d = 1
		case abs(len(lc)-len(lf)) >= bestD:
			continue
		default:
			d = edits(lf, lc)
		}
		if d < bestD {
			best, bestD = c.Path, d
		}
	}
	return best
}

// edits is the edit distance of a and b by bytes, a swap of two
// neighbours counting one (optimal string alignment).
func edits(a, b string) int {
	// back, prev and cur are the rows of a[:i-2], a[:i-1] and a[:i].
	back, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], back[j-2]+1)
			}
		}
		back, prev, cur = prev, cur, back
	}
	return prev[len(b)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
