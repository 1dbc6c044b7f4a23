package textlines

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// Body returns the lines that lro_extract's grep and lines modes read of
// an offloaded file, given r at the file's first byte. The header line is
// not one of them: line N is record N.
//
// For a text offloaded as its lines (records {"line": N, "text": S}, as
// internal/records writes them, the file's first record of that shape)
// they are the text's own lines: line N is the record whose "line" is N,
// decoded, so that a pattern matches what the text said (^ and $ anchor
// at its line's ends, \+ is a plus and not the JSON's escape) and line
// numbers are those of the text and of the descriptor's recipes (.line).
// The blank lines the file leaves out come back as empty lines; blank
// lines at the text's end are not known, and a CR before a line break is
// part of the break. A "\n" inside a record's text stays the two
// characters \ and n, so that a line stays a line.
//
// For other records each line is the record's JSON, as the file holds it.
//
// Body reads r once, streaming, in bounded memory whatever the length of
// a line. A record of a text that is not of the shape is an error of the
// returned reader that names its line.
func Body(r io.Reader) io.Reader {
	return &body{br: bufio.NewReaderSize(r, BufSize)}
}

type body struct {
	br      *bufio.Reader
	started bool // the header was read and the kind of records decided
	text    bool // the records are a text's lines, decoded
	err     error
	dec     lineDecoder
}

func (b *body) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !b.started {
		b.started = true
		if b.err = b.start(); b.err != nil {
			return 0, b.err
		}
	}
	if !b.text {
		if b.err != nil {
			return 0, b.err
		}
		return b.br.Read(p)
	}
	n := 0
	for {
		// Many short lines fill p in one call, as long as the file's bytes
		// are at hand.
		n += b.dec.drain(p[n:])
		switch {
		case n == len(p), n > 0 && (b.err != nil || b.br.Buffered() == 0):
			return n, nil
		case b.err != nil:
			return 0, b.err
		}
		chunk, err := b.br.ReadSlice('\n')
		end := err == nil
		if end {
			chunk = chunk[:len(chunk)-1]
		}
		switch {
		case err == nil, err == bufio.ErrBufferFull:
		case err == io.EOF:
			end = true
			if len(chunk) == 0 {
				b.err = b.dec.finish()
				continue
			}
		default:
			b.err = err
			continue
		}
		if derr := b.dec.feed(chunk, end); derr != nil {
			b.err = derr
		}
		if err == io.EOF && b.err == nil {
			b.err = b.dec.finish()
		}
	}
}

// start skips the header line and tells whether the records are a text's
// lines, by the first of them.
func (b *body) start() error {
	for {
		_, err := b.br.ReadSlice('\n')
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			return err // io.EOF: no records
		}
	}
	first, _ := b.br.Peek(BufSize)
	line, complete := first, len(first) < BufSize
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		line, complete = first[:i], true
	}
	if complete {
		// Decoded whole, on a decoder of its own.
		var d lineDecoder
		b.text = d.feed(line, true) == nil
	} else {
		_, _, ok := lineHead(line)
		b.text = ok
	}
	return nil
}

// lineHead parses the start of a line record, `{"line":N,"text":"`,
// returning N and the length of the start.
func lineHead(rec []byte) (n, size int, ok bool) {
	const open, mid = `{"line":`, `,"text":"`
	if !bytes.HasPrefix(rec, []byte(open)) {
		return 0, 0, false
	}
	i := len(open)
	j := i
	for j < len(rec) && j-i < 10 && rec[j] >= '0' && rec[j] <= '9' {
		j++
	}
	if j == i || rec[i] == '0' || !bytes.HasPrefix(rec[j:], []byte(mid)) {
		return 0, 0, false
	}
	for _, c := range rec[i:j] {
		n = n*10 + int(c-'0')
	}
	return n, j + len(mid), true
}

// lineDecoder turns the records of a text's lines, fed as ReadSlice gives
// them (a whole line, or a buffer of a long one), back into the text.
type lineDecoder struct {
	out    []byte // decoded, not yet read
	at     int    // of out, read
	blanks int    // empty lines due before out
	last   int    // number of the last line decoded
	rec    int    // number of the record being decoded, from 1
	state  int
	carry  []byte // an escape cut by the end of a buffer
	joined []byte // carry and the next buffer
}

const (
	atRecord   = iota // before a record
	inText            // inside its text
	afterText         // after its text's closing quote
	afterBrace        // after the record's closing brace
)

// maxEscape is the longest escape decoded at once: a surrogate pair.
const maxEscape = len(`\ud83d\ude00`)

// drain moves decoded bytes into p.
func (d *lineDecoder) drain(p []byte) int {
	n := 0
	for ; d.blanks > 0 && n < len(p); d.blanks-- {
		p[n] = '\n'
		n++
	}
	if d.blanks > 0 {
		return n
	}
	c := copy(p[n:], d.out[d.at:])
	d.at += c
	if d.at == len(d.out) {
		d.out, d.at = d.out[:0], 0
	}
	return n + c
}

func (d *lineDecoder) bad(why string) error {
	return fmt.Errorf("record %d is not a line of the text (%s): read the file with query instead", d.rec, why)
}

// feed decodes the next piece of the file; end says it ends a line.
func (d *lineDecoder) feed(chunk []byte, end bool) error {
	if len(d.carry) > 0 {
		d.joined = append(append(d.joined[:0], d.carry...), chunk...)
		chunk, d.carry = d.joined, d.carry[:0]
	}
	if d.state == atRecord {
		d.rec++
		n, size, ok := lineHead(chunk)
		switch {
		case !ok:
			return d.bad(`not {"line":N,"text":"..."}`)
		case n <= d.last:
			return d.bad(fmt.Sprintf("line %d after line %d", n, d.last))
		}
		d.blanks += n - d.last - 1
		d.last = n
		chunk, d.state = chunk[size:], inText
	}
	for d.state == inText && len(chunk) > 0 {
		i := quoteOrEscape(chunk)
		if i < 0 {
			d.out = append(d.out, chunk...)
			chunk = nil
			break
		}
		d.out = append(d.out, chunk[:i]...)
		if chunk[i] == '"' {
			chunk, d.state = chunk[i+1:], afterText
			break
		}
		if !end && len(chunk)-i < maxEscape {
			d.carry = append(d.carry[:0], chunk[i:]...)
			return nil
		}
		n, err := d.escape(chunk[i:])
		if err != nil {
			return err
		}
		chunk = chunk[i+n:]
	}
	if d.state == afterText || d.state == afterBrace {
		for _, c := range chunk {
			switch {
			case c == ' ' || c == '\t' || c == '\r':
			case c == '}' && d.state == afterText:
				d.state = afterBrace
			default:
				return d.bad("more than line and text")
			}
		}
		if !end {
			return nil
		}
		if d.state != afterBrace {
			return d.bad("no closing brace")
		}
		d.out = append(d.out, '\n')
		d.state = atRecord
		return nil
	}
	if end {
		return d.bad("its line ends inside its text")
	}
	return nil
}

// quoteOrEscape returns the index of the first '"' or '\\' of b, or -1.
func quoteOrEscape(b []byte) int {
	for i, c := range b {
		if c == '"' || c == '\\' {
			return i
		}
	}
	return -1
}

// finish checks that the file did not end inside a record.
func (d *lineDecoder) finish() error {
	if d.state != atRecord {
		return d.bad("the file ends inside it")
	}
	return io.EOF
}

// escape decodes the JSON escape at the start of b, returning its length.
func (d *lineDecoder) escape(b []byte) (int, error) {
	if len(b) < 2 {
		return 0, d.bad("a cut escape")
	}
	switch b[1] {
	case '"', '\\', '/':
		d.out = append(d.out, b[1])
	case 'b':
		d.out = append(d.out, '\b')
	case 'f':
		d.out = append(d.out, '\f')
	case 'n':
		d.out = append(d.out, `\n`...) // a line stays a line
	case 'r':
		d.out = append(d.out, '\r')
	case 't':
		d.out = append(d.out, '\t')
	case 'u':
		r, ok := hex4(b[2:])
		if !ok {
			return 0, d.bad("a bad \\u escape")
		}
		n := 6
		if utf16.IsSurrogate(r) {
			r2, ok := rune(-1), false
			if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
				r2, ok = hex4(b[8:])
			}
			if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
				r, n = dec, 12
			} else {
				r = utf8.RuneError
			}
		}
		if r == '\n' {
			d.out = append(d.out, `\n`...)
		} else {
			d.out = utf8.AppendRune(d.out, r)
		}
		return n, nil
	default:
		return 0, d.bad("a bad escape")
	}
	return 2, nil
}

// hex4 reads four hexadecimal digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
