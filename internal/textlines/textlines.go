// Package textlines reads offloaded files as lines of text, for the model:
// a range of lines as sed -n prints it, and the lines a regular expression
// matches as grep -n prints them. Both read their input once, streaming,
// and bound what they return and what one line costs, so that a file of
// any size, or a single line of a megabyte, costs a bounded amount of
// memory, time and output.
package textlines

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A Range is a range of lines, numbered from 1 and inclusive at both
// ends, as sed -n 'From,Top' takes it. To is 0 for "to the last line".
type Range struct{ From, To int }

// ParseRange parses "100-200" (lines 100 to 200), "5" (line 5) or
// "100-" (line 100 to the last).
func ParseRange(s string) (Range, error) {
	bad := func(why string) (Range, error) {
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return Range{}, fmt.Errorf("invalid line range %q: %s; want FROM-TO such as 100-200, a single line such as 5, or FROM- for the rest of the file", s, why)
	}
	from, to, dash := strings.Cut(strings.TrimSpace(s), "-")
	num := func(t string) (int, bool) {
		t = strings.TrimSpace(t)
		if t == "" || len(t) > 9 {
			return 0, false
		}
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return 0, false
			}
		}
		n, err := strconv.Atoi(t)
		return n, err == nil
	}
	var r Range
	var ok bool
	if r.From, ok = num(from); !ok {
		return bad("the first line is not a number of at most 9 digits")
	}
	if r.From < 1 {
		return bad("lines are numbered from 1")
	}
	switch {
	case !dash:
		r.To = r.From
	case strings.TrimSpace(to) == "":
		r.To = 0
	default:
		if r.To, ok = num(to); !ok {
			return bad("the last line is not a number of at most 9 digits")
		}
		if r.To < r.From {
			return bad("the last line comes before the first")
		}
	}
	return r, nil
}

// String returns the range as ParseRange reads it.
func (r Range) String() string {
	switch {
	case r.To == 0:
		return strconv.Itoa(r.From) + "-"
	case r.To == r.From:
		return strconv.Itoa(r.From)
	}
	return strconv.Itoa(r.From) + "-" + strconv.Itoa(r.To)
}

// Limits bounds the output of ReadLines and Grep.
type Limits struct {
	// Budget bounds the bytes of output, prefixes and notes about cut
	// lines included; the closing note about where output stopped comes
	// on top (it is under 200 bytes). A value under MinBudget counts
	// as MinBudget.
	Budget int
	// MaxLine bounds the bytes of one line shown: a longer line is cut,
	// at a character boundary, and followed by a note. Zero, or a value
	// over Budget, means Budget.
	MaxLine int
}

// MinBudget is the smallest budget: room for a prefix, a useful piece
// of a line and the note that it was cut.
const MinBudget = 256

func (l Limits) norm() Limits {
	l.Budget = max(l.Budget, MinBudget)
	if l.MaxLine <= 0 || l.MaxLine > l.Budget {
		l.MaxLine = l.Budget
	}
	return l
}

// Output is what ReadLines or Grep found. A worker process sends it as
// JSON, Text apart.
type Output struct {
	// Text is the lines, as sed -n or grep -n prints them, then notes in
	// brackets ("[lro: ...]") on lines of their own: after a line that
	// was cut, and at the end when the budget stopped the output.
	Text string `json:"-"`
	// Shown is how many lines Text holds, whole or cut (for grep,
	// matching and context lines).
	Shown int `json:"shown"`
	// Cut is how many of them were cut.
	Cut int `json:"cut,omitempty"`
	// Matches is, for grep, how many lines matched in the whole file
	// (the file is read to its end even once the budget is spent).
	Matches int `json:"matches,omitempty"`
	// MatchesShown is how many matching lines Text holds.
	MatchesShown int `json:"matches_shown,omitempty"`
	// Lines is the number of the last line read.
	Lines int `json:"lines"`
	// EOF reports that the whole file was read: Lines is its line count.
	EOF bool `json:"eof,omitempty"`
	// Next is, when the budget stopped the output, the first line that
	// was due and not shown; zero otherwise.
	Next int `json:"next,omitempty"`
	// Partial is, for grep, how many lines were longer than MaxMatch and
	// were searched in their first MaxMatch bytes only; FirstPartial is
	// the number of the first of them.
	Partial      int `json:"partial,omitempty"`
	FirstPartial int `json:"first_partial,omitempty"`
}

// BufSize is the read buffer: lines up to this long are handled in
// place, longer ones streamed through it.
const BufSize = 64 << 10

// MaxMatch bounds the bytes of one line that Grep matches against: a
// longer line is searched in its first MaxMatch bytes only (and counted
// in Output.Partial), so that the cost of a line is bounded whatever its
// length. Matching is linear in the input and in the pattern's program:
// about 2 µs a byte for a pattern near maxGrepProgram instructions
// ([a-z]{300}x, BenchmarkGrepLongLine), so that a line of 20 MB, matched
// whole, took 37 s (113 s on a loaded machine), and MaxMatch bytes take
// about half a second.
const MaxMatch = 256 << 10

// MaxPattern bounds the text of a grep pattern, as MaxQueryBytes bounds
// a jq query: RE2 runs in time linear in its input, but its program grows
// with the pattern.
const MaxPattern = 4096

// maxEcho bounds what an error repeats of the pattern.
const maxEcho = 200

// maxGrepProgram bounds the compiled program of a grep pattern.
const maxGrepProgram = 1000

// MaxContext bounds the context lines of a grep: before-context lines
// are held in memory until a match comes or they fall out of range.
const MaxContext = 100

// Query is what Grep looks for.
type Query struct {
	Pattern    string // an RE2 regular expression, matched against each line
	IgnoreCase bool   // as grep -i
	Before     int    // context lines before each match, as grep -B
	After      int    // context lines after each match, as grep -A
}

// Check reports what is wrong with q, as Grep would: a pattern too long,
// too complex or invalid, context lines out of bounds.
func (q Query) Check() error {
	_, err := q.compile()
	return err
}

// Regexp checks q as Grep would and returns its compiled pattern, for a
// caller that matches values rather than lines (lro_extract's matches).
func (q Query) Regexp() (*regexp.Regexp, error) { return q.compile() }

// compile checks q and compiles its pattern.
func (q Query) compile() (*regexp.Regexp, error) {
	if len(q.Pattern) > MaxPattern {
		return nil, fmt.Errorf("the pattern is %d bytes long; at most %d", len(q.Pattern), MaxPattern)
	}
	if q.Before < 0 || q.Before > MaxContext || q.After < 0 || q.After > MaxContext {
		return nil, fmt.Errorf("context lines must be from 0 to %d, got %d before and %d after", MaxContext, q.Before, q.After)
	}
	p := q.Pattern
	if q.IgnoreCase {
		p = "(?i)" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		// The error repeats the part of the pattern at fault, up to all
		// of it: a few hundred bytes of it are enough.
		msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		var se *syntax.Error
		if errors.As(err, &se) && len(se.Expr) > maxEcho {
			msg = fmt.Sprintf("%s: `%s`...(%d bytes)", se.Code, cutUTF8([]byte(se.Expr), maxEcho), len(se.Expr))
		}
		return nil, fmt.Errorf("invalid pattern (RE2 syntax, as Go's regexp): %s", msg)
	}
	// Matching is linear in the input but also in the program, whose
	// threads all run on each byte: a{1000} would take seconds a megabyte.
	if parsed, err := syntax.Parse(p, syntax.Perl); err == nil {
		if prog, err := syntax.Compile(parsed.Simplify()); err == nil && len(prog.Inst) > maxGrepProgram {
			return nil, fmt.Errorf("the pattern is too complex (%d instructions compiled; at most %d): use smaller repetition counts", len(prog.Inst), maxGrepProgram)
		}
	}
	return re, nil
}

// ReadLines returns the lines of r in rng as sed -n 'From,Top' prints them
// (the last line of r keeps its lack of a newline), each prefixed with its
// number and ':' when numbered, as grep -n ” prints them. Reading stops
// after the range.
func ReadLines(ctx context.Context, r io.Reader, rng Range, numbered bool, lim Limits) (Output, error) {
	if rng.From < 1 || rng.To != 0 && rng.To < rng.From {
		return Output{}, fmt.Errorf("invalid line range %d-%d", rng.From, rng.To)
	}
	lim = lim.norm()
	lr := newLineReader(ctx, r, lim.MaxLine)
	w := textWriter{lim: lim}
	var out Output
	for {
		lr.keep = lim.MaxLine
		if lr.n+1 < rng.From {
			lr.keep = 0 // skipped: nothing of it is kept
		}
		l, err := lr.next(nil)
		if err == io.EOF {
			out.EOF = true
			break
		}
		if err != nil {
			return Output{}, err
		}
		if l.n < rng.From {
			continue
		}
		prefix := ""
		if numbered {
			prefix = strconv.Itoa(l.n) + ":"
		}
		if !w.line(prefix, l) {
			out.Next = l.n
			break
		}
		if l.n == rng.To {
			break
		}
	}
	out.Lines = lr.n
	out.Shown, out.Cut = w.shown, w.cut
	if out.Next > 0 {
		rest := Range{From: out.Next, To: rng.To}
		fmt.Fprintf(&w.b, "[lro: stopped before line %d to stay within %d bytes; read lines %s next]\n", out.Next, lim.Budget, rest)
	}
	out.Text = w.b.String()
	return out, nil
}

// Grep returns the lines of r that q.Pattern matches, with their
// context, as grep -n prints them: "N:" before a matching line, "N-"
// before a context line, "--" between groups that are not adjacent. A
// line is matched whole, however long; a long line is shown cut. Once the
// budget is spent the rest of r is still read, to count the matches.
func Grep(ctx context.Context, r io.Reader, q Query, lim Limits) (Output, error) {
	re, err := q.compile()
	if err != nil {
		return Output{}, err
	}
	lim = lim.norm()
	lr := newLineReader(ctx, r, lim.MaxLine)
	w := textWriter{lim: lim}
	var out Output

	// before holds the last q.Before lines not shown, oldest first, their
	// heads in buffers reused as they cycle.
	before := make([]fileLine, 0, q.Before)
	var spare [][]byte
	after := 0 // context lines still due after the last match
	last := 0  // number of the last line shown
	full := false
	show := func(l fileLine, mark string) bool {
		if full {
			return false
		}
		if last > 0 && l.n > last+1 && (q.Before > 0 || q.After > 0) && !w.separator() {
			full, out.Next = true, l.n
			return false
		}
		if !w.line(strconv.Itoa(l.n)+mark, l) {
			full, out.Next = true, l.n
			return false
		}
		last = l.n
		return true
	}
	for {
		l, err := lr.next(re)
		if err == io.EOF {
			out.EOF = true
			break
		}
		if err != nil {
			return Output{}, err
		}
		if l.match {
			out.Matches++
		}
		if l.partial {
			if out.Partial++; out.FirstPartial == 0 {
				out.FirstPartial = l.n
			}
		}
		if full {
			continue // only counting now
		}
		switch {
		case l.match:
			for _, h := range before {
				show(h, "-")
				spare = append(spare, h.head)
			}
			before = before[:0]
			if show(l, ":") {
				out.MatchesShown++
			}
			after = q.After
		case after > 0:
			show(l, "-")
			after--
		case q.Before > 0:
			var buf []byte
			if len(before) == q.Before {
				buf = before[0].head
				copy(before, before[1:])
				before = before[:len(before)-1]
			} else if n := len(spare); n > 0 {
				buf, spare = spare[n-1], spare[:n-1]
			}
			l.head = append(buf[:0], l.head...)
			before = append(before, l)
		}
	}
	out.Lines = lr.n
	out.Shown, out.Cut = w.shown, w.cut
	if out.Next > 0 {
		fmt.Fprintf(&w.b, "[lro: stopped before line %d to stay within %d bytes: %d of %d matching lines shown; narrow the pattern, or read lines %d- for the rest]\n",
			out.Next, lim.Budget, out.MatchesShown, out.Matches, out.Next)
	}
	if out.Partial > 0 {
		fmt.Fprintf(&w.b, "[lro: %d lines are longer than %d bytes and were searched in their first %d bytes only (the first is line %d); a match further in, or one that needs their end ($), is not found]\n",
			out.Partial, MaxMatch, MaxMatch, out.FirstPartial)
	}
	out.Text = w.b.String()
	return out, nil
}

// textWriter builds the output of ReadLines and Grep within a budget.
type textWriter struct {
	lim   Limits
	b     strings.Builder
	shown int
	cut   int
}

// separator writes grep's "--" between groups, if it fits.
func (w *textWriter) separator() bool {
	if w.b.Len()+3 > w.lim.Budget {
		return false
	}
	w.b.WriteString("--\n")
	return true
}

// line writes prefix and l, whole when it fits MaxLine and the budget,
// else cut with a note. It returns false, writing nothing, when l does not
// fit the budget and lines were already written: the output stops there.
// The first line always goes out, cut to the budget if need be, so that a
// single enormous line still shows its beginning.
func (w *textWriter) line(prefix string, l fileLine) bool {
	room := w.lim.Budget - w.b.Len() - len(prefix) - 1 // and its newline
	if l.size <= int64(w.lim.MaxLine) && l.size <= int64(room) {
		w.b.WriteString(prefix)
		w.b.Write(l.head)
		if l.nl || prefix != "" {
			// sed keeps a missing last newline; grep adds one.
			w.b.WriteByte('\n')
		}
		w.shown++
		return true
	}
	keep := w.lim.MaxLine
	if keep > room-cutNoteMax {
		if w.shown > 0 {
			return false
		}
		keep = max(room-cutNoteMax, 0)
	}
	shown := cutUTF8(l.head, keep)
	w.b.WriteString(prefix)
	w.b.Write(shown)
	fmt.Fprintf(&w.b, "\n[lro: line %d is %d bytes long; only its first %d are shown]\n", l.n, l.size, len(shown))
	w.shown++
	w.cut++
	return true
}

// cutNoteMax is the longest note about a cut line.
const cutNoteMax = len("\n[lro: line  is  bytes long; only its first  are shown]\n") + 3*20

// cutUTF8 returns the first n bytes of b, or fewer so as not to split a
// UTF-8 sequence.
func cutUTF8(b []byte, n int) []byte {
	if n >= len(b) {
		return b
	}
	for i := 0; i < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(b[n]); i++ {
		n--
	}
	return b[:n]
}

// A fileLine is one line read by a lineReader.
type fileLine struct {
	n     int    // its number, from 1
	head  []byte // its first bytes, at most keep; valid until the next read
	size  int64  // its length without the newline
	nl    bool   // a newline ended it (the last line of a file may lack one)
	match bool   // the regular expression given to next matches it
	// partial: the line is longer than MaxMatch, and match tells about
	// its first MaxMatch bytes only.
	partial bool
}

// lineReader reads lines of any length with a bounded buffer: a line that
// does not fit is streamed, keeping only its first keep bytes.
type lineReader struct {
	ctx   context.Context
	br    *bufio.Reader
	n     int    // number of the last line read
	keep  int    // bytes of a line kept in fileLine.head
	head  []byte // the kept bytes of a long line (reused)
	spill []byte // the first MaxMatch bytes of a long line, to match (reused)
	// unchecked counts the bytes read since the context was last
	// checked: it is checked every 256 lines or 64 KiB.
	unchecked int
}

func newLineReader(ctx context.Context, r io.Reader, keep int) *lineReader {
	return &lineReader{ctx: ctx, br: bufio.NewReaderSize(r, BufSize), keep: keep}
}

// next reads the next line, or returns io.EOF. When re is not nil it
// reports whether re matches the line's first MaxMatch bytes.
func (lr *lineReader) next(re *regexp.Regexp) (fileLine, error) {
	if lr.n%256 == 0 || lr.unchecked > BufSize {
		if err := lr.ctx.Err(); err != nil {
			return fileLine{}, err
		}
		lr.unchecked = 0
	}
	chunk, err := lr.br.ReadSlice('\n')
	lr.unchecked += len(chunk)
	switch {
	case err == nil || err == io.EOF && len(chunk) > 0:
		lr.n++
		l := fileLine{n: lr.n}
		if err == nil {
			chunk, l.nl = chunk[:len(chunk)-1], true
		}
		l.size = int64(len(chunk))
		if re != nil {
			l.match = re.Match(chunk)
		}
		l.head = chunk[:min(len(chunk), lr.keep)]
		return l, nil
	case err == bufio.ErrBufferFull:
		return lr.long(chunk, re)
	}
	return fileLine{}, err // io.EOF at the end, or a read error
}

// long reads the rest of a line longer than the buffer, whose first
// buffer is first. re, if any, is matched against the line's first
// MaxMatch bytes, gathered as they stream by.
func (lr *lineReader) long(first []byte, re *regexp.Regexp) (fileLine, error) {
	lr.n++
	l := fileLine{n: lr.n, size: int64(len(first))}
	lr.head = append(lr.head[:0], first[:min(len(first), lr.keep)]...)
	pending := re != nil // the line is still to be matched
	if pending {
		lr.spill = append(lr.spill[:0], first[:min(len(first), MaxMatch)]...)
	}
	for i := 0; ; i++ {
		chunk, err := lr.br.ReadSlice('\n')
		if err == nil {
			chunk, l.nl = chunk[:len(chunk)-1], true
		}
		l.size += int64(len(chunk))
		lr.record(chunk)
		end := err == nil || err == io.EOF
		if pending {
			room := MaxMatch - len(lr.spill)
			lr.spill = append(lr.spill, chunk[:min(len(chunk), room)]...)
			if len(chunk) > room || l.size > MaxMatch || end {
				l.partial = l.size > MaxMatch
				l.match = re.Match(wholeRunes(lr.spill, l.partial))
				pending = false
			}
		}
		switch {
		case end:
			l.head = lr.head
			return l, nil
		case err != bufio.ErrBufferFull:
			return fileLine{}, err
		}
		if i%16 == 15 { // every megabyte of a line
			if err := lr.ctx.Err(); err != nil {
				return fileLine{}, err
			}
		}
	}
}

// wholeRunes returns b, when cut, without a UTF-8 sequence cut short at
// its end.
func wholeRunes(b []byte, cut bool) []byte {
	for i := 1; cut && i < utf8.UTFMax && i <= len(b); i++ {
		if c := b[len(b)-i]; utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// record keeps what is still wanted of p, the next bytes of a long line.
func (lr *lineReader) record(p []byte) {
	if n := lr.keep - len(lr.head); n > 0 {
		lr.head = append(lr.head, p[:min(len(p), n)]...)
	}
}
