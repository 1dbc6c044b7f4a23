package records

import (
	"bytes"
	"slices"
	"strings"

	"github.com/mcplro/lro/internal/jsonscan"
)

// Truncated rebuilds the document in the shape it had, with section i cut
// to its first kept[i] records: the inline fallback when a file cannot be
// written.
func (l *Layout) Truncated(kept []int) []byte {
	switch {
	case l.Items:
		return nil // the caller keeps the leading items themselves
	case l.Root == nil:
		return bytes.Join(FirstRecords(l.Sections[0].Src, kept[0]), []byte("\n"))
	case l.Root[0] == '[' || l.Sections[0].path == nil:
		// The records are the root's elements, or its members.
		return l.Sections[0].Cut(kept[0])
	}
	r := rebuild{l: l, kept: kept, cuts: map[string]int{}, inner: map[string]bool{}, fields: map[string][2]int{}}
	for i, s := range l.Sections {
		paths := [][]string{s.path}
		if s.fields != nil {
			paths = paths[:0]
			for j, f := range s.fields {
				r.fields[f] = [2]int{i, j}
				paths = append(paths, splitKey(f))
			}
		} else {
			r.cuts[s.key()] = i
		}
		for _, p := range paths {
			for n := 1; n < len(p); n++ {
				r.inner[PathKey(p[:n])] = true
			}
		}
	}
	var b bytes.Buffer
	r.object(&b, l.Root, nil)
	return b.Bytes()
}

func splitKey(k string) []string { return strings.Split(k, "\x00") }

// rebuild writes a result object with its sections cut.
type rebuild struct {
	l      *Layout
	kept   []int
	cuts   map[string]int    // section path key: section index
	inner  map[string]bool   // objects on the way to a section or field
	fields map[string][2]int // overflow field path key: section, position
}

func (r *rebuild) object(b *bytes.Buffer, obj []byte, prefix []string) {
	b.WriteByte('{')
	n := 0
	_ = jsonscan.Fields(obj, func(kv jsonscan.Field) bool {
		path := append(slices.Clip(prefix), string(kv.Key))
		k := PathKey(path)
		if at, ok := r.fields[k]; ok && at[1] >= r.kept[at[0]] {
			return true // an overflow field left out
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteByte('"')
		b.Write(kv.Key)
		b.WriteString(`":`)
		switch i, cut := r.cuts[k]; {
		case cut:
			b.Write(r.l.Sections[i].Cut(r.kept[i]))
		case r.inner[k]:
			r.object(b, kv.Value, path)
		default:
			b.Write(kv.Value)
		}
		return true
	})
	b.WriteByte('}')
}

// Cut returns the section's value with its first k records. A text Cut
// ends with the marker of a Cut, so that what it shows is not taken for
// the whole text; an array or an object shows whole elements or members,
// fewer of them, as the fallback's warning says.
func (s *Section) Cut(k int) []byte {
	var b bytes.Buffer
	kept := FirstRecords(s.Src, k)
	switch {
	case s.Text:
		text := bytes.Join(kept, []byte("\n"))
		if k < s.Src.Count() {
			text = append(text, CutMarker...)
		}
		return jsonscan.AppendQuoted(nil, text)
	case s.Members:
		b.WriteByte('{')
		b.Write(bytes.Join(kept, []byte(",")))
		b.WriteByte('}')
	default:
		writeArray(&b, kept)
	}
	return b.Bytes()
}

func writeArray[E ~[]byte](b *bytes.Buffer, els []E) {
	b.WriteByte('[')
	for i, e := range els {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(']')
}
