package lro

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/mcplro/lro/internal/jsonscan"
)

// found is a result set found in a tool result, with what is needed to
// rebuild a truncated result in the same shape.
type found struct {
	records []json.RawMessage
	scores  []float64
	extra   map[string]json.RawMessage
	generic bool

	// How to rebuild: the elements of the original array (hits keep their
	// score), the object it came from and its array field, or text lines.
	elements [][]byte
	object   []byte
	field    string
	lines    bool
}

// bytesOf views a string's bytes without copying. The engine only reads
// records, so the string's immutability is respected.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// knownFields are the array fields a result object usually keeps its
// records in, in order of preference.
var knownFields = []string{"results", "memories", "hits", "items", "records", "data", "rows"}

// findRecords finds the records in payload: a JSON array, the array field
// of a JSON object, or, for text that is not JSON, its lines. isJSON says
// that payload is valid JSON (the caller has checked).
func findRecords(payload []byte, isJSON bool, field string) found {
	p := bytes.TrimSpace(payload)
	if isJSON && len(p) > 0 && (p[0] == '[' || p[0] == '{') {
		if p[0] == '[' {
			els, _ := jsonscan.Elements(p)
			return fromElements(els)
		}
		if f, ok := fromObject(p, field); ok {
			return f
		}
	}
	return fromLines(payload)
}

func fromElements(els [][]byte) found {
	f := found{elements: els, records: make([]json.RawMessage, len(els))}
	hits := len(els) > 0
	for _, e := range els {
		if !isHit(e) {
			hits = false
			break
		}
	}
	if !hits {
		for i, e := range els {
			f.records[i] = e
		}
		return f
	}
	// Search hits {score, memory}: the memory is the line, the score goes
	// to the summary only.
	f.scores = make([]float64, len(els))
	for i, e := range els {
		s, _ := jsonscan.Lookup(e, "score")
		m, _ := jsonscan.Lookup(e, "memory")
		f.scores[i], _ = strconv.ParseFloat(string(s), 64)
		f.records[i] = m
	}
	return f
}

// isHit reports whether e is an object of exactly a numeric score and an
// object memory.
func isHit(e []byte) bool {
	n, ok := 0, true
	err := jsonscan.Fields(e, func(kv jsonscan.Field) bool {
		n++
		switch string(kv.Key) {
		case "score":
			ok = len(kv.Value) > 0 && (kv.Value[0] == '-' || kv.Value[0] >= '0' && kv.Value[0] <= '9')
		case "memory":
			ok = len(kv.Value) > 0 && kv.Value[0] == '{'
		default:
			ok = false
		}
		return ok
	})
	return err == nil && ok && n == 2
}

func fromObject(obj []byte, want string) (found, bool) {
	arrays := map[string][]byte{}
	var order []string
	all := map[string]json.RawMessage{}
	_ = jsonscan.Fields(obj, func(kv jsonscan.Field) bool {
		k := string(kv.Key)
		all[k] = kv.Value
		order = append(order, k)
		if len(kv.Value) > 0 && kv.Value[0] == '[' {
			arrays[k] = kv.Value
		}
		return true
	})
	field := want
	if field == "" {
		for _, k := range knownFields {
			if _, ok := arrays[k]; ok {
				field = k
				break
			}
		}
		if field == "" && len(arrays) == 1 {
			for k := range arrays {
				field = k
			}
		}
	}
	arr, ok := arrays[field]
	if !ok {
		return found{}, false
	}
	els, _ := jsonscan.Elements(arr)
	f := fromElements(els)
	f.object, f.field = obj, field
	delete(all, field)
	f.extra = withoutStated(all, map[string]any{"count": len(f.records)})
	return f, true
}

// withoutStated returns the fields of extra that do not repeat what the
// summary already says: a field named like a summary field (see
// OffloadSummary.stated) with the same JSON value is left out, so that a
// tool's own "count" of the records it returned does not appear twice.
// A field with another value stays: a total of 742 beside a count of 200
// is news. It returns nil when nothing is left.
func withoutStated(extra map[string]json.RawMessage, stated map[string]any) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range extra {
		if s, ok := stated[k]; ok && sameJSON(v, s) {
			continue
		}
		if out == nil {
			out = make(map[string]json.RawMessage, len(extra))
		}
		out[k] = v
	}
	return out
}

// stated returns the summary's fields by their JSON names, as
// withoutStated takes them.
func (s OffloadSummary) stated() map[string]any {
	return map[string]any{
		"count":            s.Count,
		"estimated_tokens": s.EstimatedTokens,
		"operation":        s.Operation,
		"top_namespaces":   s.TopNamespaces,
		"score_range":      s.ScoreRange,
		"detail":           s.Detail,
	}
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

// fromLines offloads text as one {"line", "text"} object per line, so that
// both grep and jq work on the file.
func fromLines(text []byte) found {
	text = bytes.TrimSuffix(text, []byte("\n"))
	f := found{generic: true, lines: true}
	n := 0
	for line := range bytes.SplitSeq(text, []byte("\n")) {
		n++
		line = bytes.TrimSuffix(line, []byte("\r"))
		rec := make([]byte, 0, len(line)+32)
		rec = append(rec, `{"line":`...)
		rec = strconv.AppendInt(rec, int64(n), 10)
		rec = append(rec, `,"text":`...)
		q, _ := marshalText(string(line)) // unescaped: a model reads '<', not \u003c
		rec = append(rec, q...)
		rec = append(rec, '}')
		f.records = append(f.records, rec)
		f.elements = append(f.elements, line)
	}
	return f
}

// truncated rebuilds the payload with only the first kept records, in the
// shape it had.
func (f found) truncated(kept int) []byte {
	var b bytes.Buffer
	switch {
	case f.lines:
		return bytes.Join(f.elements[:kept], []byte("\n"))
	case f.object != nil:
		b.WriteByte('{')
		first := true
		_ = jsonscan.Fields(f.object, func(kv jsonscan.Field) bool {
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteByte('"')
			b.Write(kv.Key)
			b.WriteString(`":`)
			if string(kv.Key) == f.field {
				writeArray(&b, f.elements[:kept])
			} else {
				b.Write(kv.Value)
			}
			return true
		})
		b.WriteByte('}')
	default:
		writeArray(&b, f.elements[:kept])
	}
	return b.Bytes()
}

func writeArray(b *bytes.Buffer, els [][]byte) {
	b.WriteByte('[')
	for i, e := range els {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(']')
}

func rawElements(records []json.RawMessage) [][]byte {
	out := make([][]byte, len(records))
	for i, r := range records {
		out[i] = r
	}
	return out
}
