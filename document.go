package lro

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcplro/lro/host"
	"github.com/mcplro/lro/internal/jsonscan"
	"github.com/mcplro/lro/internal/records"
)

// A document is the part of a result that is judged against the threshold
// and offloaded: the structured content, or the text of the text items
// and embedded text resources. Images, audio and other items are never
// part of it; they stay as they are.
type document struct {
	data       []byte         // what the records are found in
	isJSON     bool           // data is valid JSON
	index      jsonscan.Index // what validating data found of its members and arrays
	tokens     int            // the estimate judged against the threshold
	replace    []int          // the content items the descriptor takes the place of
	items      []string       // when each text item is a record: their texts
	structured bool           // the structured content is replaced too
	preamble   []byte         // a short text before the JSON of data ("Directory tree for /srv:")
}

// maxPreamble bounds the text a JSON document may follow in a text item:
// a line or three that say what follows, not a text with JSON in it.
const maxPreamble = 512

// splitPreamble returns the JSON document that follows a short preamble in
// text ("Found 3 files:\n[...]"), and the preamble; ok is false when text
// is not such a thing. The JSON starts a line of the first maxPreamble
// bytes and runs to the end; the caller validates it.
func splitPreamble(text string) (preamble, body string, ok bool) {
	for at := 0; at < len(text); {
		nl := strings.IndexByte(text[at:], '\n')
		if nl < 0 {
			return "", "", false
		}
		at += nl + 1
		if at > maxPreamble+1 {
			// A long line before the JSON: the preamble, which a file's
			// header keeps whole, stays short.
			return "", "", false
		}
		if rest := text[at:]; records.LooksJSON(rest) && (rest[0] == '{' || rest[0] == '[') {
			if pre := strings.TrimSpace(text[:at]); pre != "" {
				return pre, rest, true
			}
			return "", "", false
		}
	}
	return "", "", false
}

// jsonBody returns the JSON document of a text item: the text, or what
// follows its preamble.
func jsonBody(text string) string {
	if _, body, ok := splitPreamble(text); ok {
		text = body
	}
	return strings.TrimSpace(text)
}

// smallItemBytes is the size under which a text item beside a larger one
// is kept inline as it is: a one-line summary next to the data.
const smallItemBytes = records.SectionBytes

// textItems returns the indices of the text items and embedded text
// resources of res, and their total size.
func textItems(res host.Result) (idx []int, size int) {
	for i, c := range res.Content {
		if c.Judged() {
			idx = append(idx, i)
			size += len(c.Text)
		}
	}
	return idx, size
}

// surelySmall reports, without estimating, that res is under the
// threshold: with the heuristic estimator no rune costs more than a token
// per three bytes, and no byte of invalid UTF-8 (which it checks for)
// more than half a token.
func (o *Offloader) surelySmall(res host.Result) bool {
	if !o.heuristic() {
		return false
	}
	idx, size := textItems(res)
	var raw []byte
	switch s := res.Structured.(type) {
	case nil:
	case json.RawMessage:
		raw = s
	case []byte:
		raw = s
	default:
		// A Go value: its size is known only from a JSON text beside it,
		// which is taken to be its serialization.
		if !slices.ContainsFunc(idx, func(i int) bool { return records.LooksJSON(res.Content[i].Text) }) {
			return false
		}
	}
	return o.surelyUnder(size+len(raw), func() bool {
		return utf8.Valid(raw) && !slices.ContainsFunc(idx, func(i int) bool { return !utf8.ValidString(res.Content[i].Text) })
	})
}

// heuristic reports whether the estimator is the library's own, whose
// bounds the fast paths rely on.
func (o *Offloader) heuristic() bool {
	_, ok := o.opts.estimator.(HeuristicEstimator)
	return ok
}

// surelyUnder reports, with the heuristic estimator, that size bytes are
// under the threshold whatever they hold: no byte of invalid UTF-8 costs
// more than half a token, and no rune more than a token per three bytes
// (see [HeuristicEstimator]). valid, when not nil, says whether the bytes
// are valid UTF-8; it is asked only when that decides.
func (o *Offloader) surelyUnder(size int, valid func() bool) bool {
	t := o.cfg.ThresholdTokens
	return o.heuristic() && (size <= 2*t || size <= 3*t && valid != nil && valid())
}

// documentOf returns the document of res. The threshold applies to the
// result set once: a JSON text beside structured content is taken to be
// its serialization, as the MCP specification says it should be, and is
// judged once; other texts are judged as well, and replaced unless small.
// Without structured content, a single large text is the document (small
// ones beside it stay), and several texts of similar weight are records
// one each.
func (o *Offloader) documentOf(res host.Result) (document, bool) {
	idx, _ := textItems(res)
	if res.Structured != nil {
		return o.structuredDocument(res, idx)
	}
	switch len(idx) {
	case 0:
		return document{}, false
	case 1:
		return o.textDocument(res.Content[idx[0]].Text, idx), true
	}
	var large []int
	tokens := 0
	for _, i := range idx {
		tokens += o.EstimateTokens(records.BytesOf(res.Content[i].Text))
		if len(res.Content[i].Text) > smallItemBytes {
			large = append(large, i)
		}
	}
	if len(large) > 1 && repeats(res, large) {
		// The same document twice, as a text and as an embedded resource
		// (with a preamble or without): written once, judged once, and
		// both replaced by its descriptor.
		for _, i := range large[1:] {
			tokens -= o.EstimateTokens(records.BytesOf(res.Content[i].Text))
		}
		d := o.textDocument(res.Content[large[0]].Text, large)
		d.tokens = tokens
		d.preamble = preambles(res, large)
		return d, true
	}
	if len(large) == 1 {
		d := o.textDocument(res.Content[large[0]].Text, large)
		d.tokens = tokens
		return d, true
	}
	d := document{tokens: tokens, replace: idx, items: make([]string, len(idx))}
	for j, i := range idx {
		d.items[j] = res.Content[i].Text
	}
	return d, true
}

// preambles returns the preambles of the items of res that repeat one
// document, each different one whole, a blank line between them, or nil
// when none has one: what the file's header keeps of them.
func preambles(res host.Result, items []int) []byte {
	var seen []string
	for _, i := range items {
		if pre, _, ok := splitPreamble(res.Content[i].Text); ok && !slices.Contains(seen, pre) {
			seen = append(seen, pre)
		}
	}
	if seen == nil {
		return nil
	}
	return []byte(strings.Join(seen, "\n\n"))
}

// repeats reports whether the large items of res all hold one JSON
// document.
func repeats(res host.Result, large []int) bool {
	first := jsonBody(res.Content[large[0]].Text)
	if !records.LooksJSON(first) {
		return false
	}
	for _, i := range large[1:] {
		if jsonBody(res.Content[i].Text) != first {
			return false
		}
	}
	return true
}

func (o *Offloader) textDocument(text string, replace []int) document {
	d := document{data: records.BytesOf(text), replace: replace}
	if records.LooksJSON(text) {
		d.index, d.isJSON = validIndex(d.data)
	} else if pre, body, ok := splitPreamble(text); ok {
		if ix, valid := validIndex(records.BytesOf(body)); valid {
			d.data, d.preamble, d.index, d.isJSON = records.BytesOf(body), records.BytesOf(pre), ix, true
		}
	}
	d.tokens = o.estimateText(records.BytesOf(text), d.index.ASCII && d.preamble == nil)
	return d
}

func (o *Offloader) structuredDocument(res host.Result, idx []int) (document, bool) {
	d := document{structured: true}
	serialized := false
	for _, i := range idx {
		t := res.Content[i].Text
		if !serialized && records.LooksJSON(t) {
			d.index, serialized = validIndex(records.BytesOf(t))
		}
		if serialized && d.data == nil {
			d.data, d.isJSON = records.BytesOf(t), true
			d.tokens += o.estimateText(d.data, d.index.ASCII)
			d.replace = append(d.replace, i)
			continue
		}
		d.tokens += o.EstimateTokens(records.BytesOf(t))
		if len(t) > smallItemBytes {
			d.replace = append(d.replace, i)
		}
	}
	if serialized {
		return d, true
	}
	var s []byte
	switch v := res.Structured.(type) {
	case json.RawMessage:
		s = v
	case []byte:
		s = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return document{}, false
		}
		s = b
	}
	d.index, d.isJSON = validIndex(s)
	d.data = s
	d.tokens += o.estimateText(s, d.index.ASCII)
	return d, true
}

// estimateText is EstimateTokens of a document's text; ascii, when the
// pass that validated it found every byte ASCII, gives the heuristic's
// estimate from the length alone (a quarter token a byte), sparing a
// pass over the text.
func (o *Offloader) estimateText(data []byte, ascii bool) int {
	if o.heuristic() && ascii {
		return (len(data) + 3) / 4
	}
	return o.EstimateTokens(data)
}

// size is the bytes of the document.
func (d document) size() int64 {
	n := int64(len(d.data))
	for _, t := range d.items {
		n += int64(len(t))
	}
	return n
}

// layoutOf finds the records of a document.
func (d document) layoutOf(recordsField string) records.Layout {
	if d.items != nil {
		f := records.FromItems(d.items)
		size := 0
		for _, t := range d.items {
			size += len(t)
		}
		return records.Layout{Items: true, Sections: []records.Section{{Found: f, Bytes: size}}}
	}
	l := records.FindLayout(d.data, d.isJSON, &d.index, recordsField)
	if d.preamble != nil {
		l.AddExtra([]string{"preamble"}, jsonscan.AppendQuoted(nil, clipPreamble(d.preamble)))
	}
	return l
}

// clipPreamble cuts a preamble to what the summary shows of it.
func clipPreamble(p []byte) []byte {
	if len(p) <= 200 {
		return p
	}
	return append(bytes.ToValidUTF8(p[:200], nil), "…"...)
}

// validIndex validates a document's JSON text and, in the same pass,
// locates the elements of its arrays and the search hits among them, so
// that finding its records takes no second walk (see newArrayRecords).
func validIndex(data []byte) (jsonscan.Index, bool) {
	return jsonscan.ValidIndex(data, "score", "memory")
}

// PassesUnchanged reports whether a result of tool whose items take size
// bytes in all (as JSON, escapes included) surely leaves [Host.Serve]
// unchanged, whatever it holds (invalid UTF-8 too, which arrives as
// U+FFFD, half a token a byte) and whatever the call's arguments: when
// offloading is off, or when the result is under the threshold and
// nothing else is judged (no session budget, and no detail argument to
// check: the tool's policy is generic, or it has none and the host judges
// it under a generic one). A host may then send such a result without
// calling Serve; the proxy does, to spare a small call its round through
// an SDK's server.
func (h Host) PassesUnchanged(tool string, size int) bool {
	o := h.o
	if !o.cfg.IsEnabled() {
		return true
	}
	if o.cfg.SessionBudgetTokens > 0 {
		return false
	}
	if p, ok := o.policyFor(tool); ok && !p.Generic {
		return false
	}
	// The bytes are not seen: they may be invalid UTF-8, which a client
	// receives as U+FFFD, half a token a byte.
	return o.surelyUnder(size, nil)
}
