package lro

import (
	"bytes"
	"slices"
	"strings"

	"github.com/mcplro/lro/internal/jsonscan"
)

// truncated rebuilds the document in the shape it had, with section i cut
// to its first kept[i] records: the inline fallback when a file cannot be
// written.
func (l *layout) truncated(kept []int) []byte {
	switch {
	case l.items:
		return nil // the caller keeps the leading items themselves
	case l.root == nil:
		return bytes.Join(firstRecords(l.sections[0].src, kept[0]), []byte("\n"))
	case l.root[0] == '[' || l.sections[0].path == nil:
		// The records are the root's elements, or its members.
		return l.sections[0].cut(kept[0])
	}
	r := rebuild{l: l, kept: kept, cuts: map[string]int{}, inner: map[string]bool{}, fields: map[string][2]int{}}
	for i, s := range l.sections {
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
				r.inner[pathKey(p[:n])] = true
			}
		}
	}
	var b bytes.Buffer
	r.object(&b, l.root, nil)
	return b.Bytes()
}

func splitKey(k string) []string { return strings.Split(k, "\x00") }

// rebuild writes a result object with its sections cut.
type rebuild struct {
	l      *layout
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
		k := pathKey(path)
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
			b.Write(r.l.sections[i].cut(r.kept[i]))
		case r.inner[k]:
			r.object(b, kv.Value, path)
		default:
			b.Write(kv.Value)
		}
		return true
	})
	b.WriteByte('}')
}

// cut returns the section's value with its first k records. A text cut
// ends with the marker of a cut, so that what it shows is not taken for
// the whole text; an array or an object shows whole elements or members,
// fewer of them, as the fallback's warning says.
func (s *section) cut(k int) []byte {
	var b bytes.Buffer
	kept := firstRecords(s.src, k)
	switch {
	case s.text:
		text := bytes.Join(kept, []byte("\n"))
		if k < s.src.count() {
			text = append(text, cutMarker...)
		}
		return jsonscan.AppendQuoted(nil, text)
	case s.members:
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

// fit returns how many leading records of each section the inline
// fallback keeps: what the document sends besides the sections comes
// first, and the rest of the threshold is shared between the sections in
// proportion to their size.
func (o *engine) fit(l *layout, extraTokens int) []int {
	kept := make([]int, len(l.sections))
	budget := o.cfg.ThresholdTokens - extraTokens
	if !l.items {
		budget -= o.EstimateTokens(l.truncated(kept))
	}
	total := 0
	for _, s := range l.sections {
		total += max(s.bytes, 1)
	}
	for i, s := range l.sections {
		share := budget
		if len(l.sections) > 1 {
			share = int(int64(budget) * int64(max(s.bytes, 1)) / int64(total))
		}
		kept[i] = o.leading(s.src, share)
	}
	return kept
}
