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
	case l.Sections[0].path == nil:
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
	r.container(&b, l.Root, nil)
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

// container writes v, an object or an array on the way to a section, at
// path prefix.
func (r *rebuild) container(b *bytes.Buffer, v []byte, prefix []string) {
	n := 0
	// item writes the value at path, unless it is an overflow field left
	// out, after key when v is an object.
	item := func(path []string, key, v []byte) {
		k := PathKey(path)
		if at, ok := r.fields[k]; ok && at[1] >= r.kept[at[0]] {
			return
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		if key != nil {
			b.WriteByte('"')
			b.Write(key)
			b.WriteString(`":`)
		}
		switch i, cut := r.cuts[k]; {
		case cut:
			b.Write(r.l.Sections[i].Cut(r.kept[i]))
		case r.inner[k]:
			r.container(b, v, path)
		default:
			b.Write(v)
		}
	}
	if v[0] == '[' {
		b.WriteByte('[')
		i := 0
		_ = jsonscan.EachElement(v, func(el []byte) bool {
			item(append(slices.Clip(prefix), indexStep(i)), nil, el)
			i++
			return true
		})
		b.WriteByte(']')
		return
	}
	b.WriteByte('{')
	_ = jsonscan.Fields(v, func(kv jsonscan.Field) bool {
		item(append(slices.Clip(prefix), string(kv.Key)), kv.Key, kv.Value)
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
