package tmpl

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a token of a template's text.
type tokKind int

const (
	tText      tokKind = iota // text outside actions, trimmed as the markers say
	tLeft                     // {{ or {{-
	tRight                    // }} or -}}
	tSpace                    // spaces and newlines inside an action
	tIdent                    // a function's name
	tKeyword                  // if, else, end, with, and the keywords Parse rejects
	tBool                     // true, false
	tField                    // .Name
	tDot                      // .
	tVar                      // $ or $name
	tNumber                   // 1, -2, 1.5e3, 0x1F, 1_000
	tComplex                  // 1+2i
	tChar                     // 'a'
	tString                   // "..."
	tRawString                // `...`
	tPipe                     // |
	tLParen                   // (
	tRParen                   // )
	tDeclare                  // := or =
	tOther                    // any other printable ASCII character
	tEOF
	tError // a syntax error, in val, that ends the tokens
)

// token is a token of a template's text, at pos.
type token struct {
	kind tokKind
	pos  int
	val  string
}

// keywords are the words text/template reserves; Parse runs if, else,
// end and with and rejects the others by name.
var keywords = map[string]bool{"if": true, "else": true, "end": true, "with": true, "range": true,
	"template": true, "block": true, "define": true, "break": true, "continue": true, "nil": true}

const spaceChars = " \t\r\n"

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' }

func isAlphaNumeric(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// lexer splits a template's text into tokens, as text/template's lexer
// does: "{{- " trims the spaces before it and " -}}" those after it (the
// space is part of the marker, so {{-3}} prints -3), and comments
// {{/* */}} vanish. A syntax error is the last token, so that the parser
// reports the errors in the order of the text.
type lexer struct {
	text  string
	pos   int
	start int // where the current action began
	toks  []token
}

// lex splits text into tokens, the last of which is tEOF or tError.
func lex(text string) []token {
	l := &lexer{text: text}
	for l.lexText() {
	}
	return l.toks
}

func (l *lexer) emit(kind tokKind, pos int, val string) {
	l.toks = append(l.toks, token{kind, pos, val})
}

// fail ends the tokens with an error at pos.
func (l *lexer) fail(pos int, format string, args ...any) bool {
	l.emit(tError, pos, fmt.Sprintf(format, args...))
	return false
}

// lexText lexes text up to an action and the action, and says whether
// more follows.
func (l *lexer) lexText() bool {
	x := strings.Index(l.text[l.pos:], "{{")
	if x < 0 {
		if l.pos < len(l.text) {
			l.emit(tText, l.pos, l.text[l.pos:])
		}
		l.emit(tEOF, len(l.text), "")
		return false
	}
	delim := l.pos + x
	text := l.text[l.pos:delim]
	after := delim + 2
	if trim := l.text[after:]; len(trim) >= 2 && trim[0] == '-' && isSpace(rune(trim[1])) {
		text = strings.TrimRight(text, spaceChars)
		after += 2
	}
	if text != "" {
		l.emit(tText, l.pos, text)
	}
	l.start, l.pos = delim, after
	if strings.HasPrefix(l.text[l.pos:], "/*") {
		return l.lexComment()
	}
	l.emit(tLeft, delim, "")
	return l.lexAction()
}

// atRightDelim says whether "}}" or " -}}" is at the lexer's position.
func (l *lexer) atRightDelim() (delim, trim bool) {
	s := l.text[l.pos:]
	if len(s) >= 4 && isSpace(rune(s[0])) && s[1] == '-' && s[2:4] == "}}" {
		return true, true
	}
	return strings.HasPrefix(s, "}}"), false
}

// skipRightDelim moves past the right delimiter at the position and, if
// it trims, the spaces after it.
func (l *lexer) skipRightDelim(trim bool) {
	if trim {
		l.pos += 2
	}
	l.pos += 2
	if trim {
		l.pos = len(l.text) - len(strings.TrimLeft(l.text[l.pos:], spaceChars))
	}
}

func (l *lexer) lexComment() bool {
	end := strings.Index(l.text[l.pos+2:], "*/")
	if end < 0 {
		return l.fail(l.start, "unclosed comment")
	}
	l.pos += 2 + end + 2
	delim, trim := l.atRightDelim()
	if !delim {
		return l.fail(l.pos, "comment ends before closing delimiter")
	}
	l.skipRightDelim(trim)
	return true
}

// lexAction lexes the inside of an action and its right delimiter.
func (l *lexer) lexAction() bool {
	depth := 0 // of parentheses
	for {
		if delim, trim := l.atRightDelim(); delim {
			if depth > 0 {
				return l.fail(l.pos, "unclosed left paren")
			}
			l.emit(tRight, l.pos, "")
			l.skipRightDelim(trim)
			return true
		}
		if l.pos == len(l.text) {
			return l.fail(l.start, "unclosed action")
		}
		start := l.pos
		r, w := utf8.DecodeRuneInString(l.text[l.pos:])
		l.pos += w
		ok := true
		switch {
		case isSpace(r):
			ok = l.lexSpace(start)
		case r == ':' || r == '=':
			if r == ':' && !l.accept("=") {
				return l.fail(start, "expected :=")
			}
			l.emit(tDeclare, start, l.text[start:l.pos])
		case r == '|':
			l.emit(tPipe, start, "|")
		case r == '"':
			ok = l.lexQuote(start, '"', tString, "unterminated quoted string")
		case r == '\'':
			ok = l.lexQuote(start, '\'', tChar, "unterminated character constant")
		case r == '`':
			ok = l.lexRaw(start)
		case r == '$':
			ok = l.lexWord(start, tVar, tVar)
		case r == '.' && (l.pos == len(l.text) || l.text[l.pos] < '0' || l.text[l.pos] > '9'):
			ok = l.lexWord(start, tDot, tField)
		case r == '.' || r == '+' || r == '-' || '0' <= r && r <= '9':
			ok = l.lexNumber(start)
		case isAlphaNumeric(r):
			ok = l.lexWord(start, tIdent, tIdent)
		case r == '(':
			depth++
			l.emit(tLParen, start, "(")
		case r == ')':
			if depth--; depth < 0 {
				return l.fail(start, "unexpected right paren")
			}
			l.emit(tRParen, start, ")")
		case r <= unicode.MaxASCII && unicode.IsPrint(r):
			l.emit(tOther, start, string(r))
		default:
			return l.fail(start, "unrecognized character in action: %#U", r)
		}
		if !ok {
			return false
		}
	}
}

// lexSpace lexes spaces, leaving the last one if it begins " -}}".
func (l *lexer) lexSpace(start int) bool {
	for l.pos < len(l.text) && isSpace(rune(l.text[l.pos])) {
		l.pos++
	}
	if strings.HasPrefix(l.text[l.pos:], "-}}") {
		l.pos--
	}
	if l.pos > start {
		l.emit(tSpace, start, "")
	}
	return true
}

// lexWord lexes a name (a function's, .Field's or $var's) from start,
// whose first rune the lexer has read; alone, it is the token kind bare
// (. or $).
func (l *lexer) lexWord(start int, bare, kind tokKind) bool {
	if kind != tIdent && l.atTerminator() {
		l.emit(bare, start, l.text[start:l.pos])
		return true
	}
	for {
		r, w := utf8.DecodeRuneInString(l.text[l.pos:])
		if w == 0 || !isAlphaNumeric(r) {
			break
		}
		l.pos += w
	}
	if !l.atTerminator() {
		r, _ := utf8.DecodeRuneInString(l.text[l.pos:])
		return l.fail(l.pos, "bad character %#U", r)
	}
	word := l.text[start:l.pos]
	switch {
	case kind != tIdent:
	case keywords[word]:
		kind = tKeyword
	case word == "true" || word == "false":
		kind = tBool
	}
	l.emit(kind, start, word)
	return true
}

// atTerminator says whether what follows may end a name.
func (l *lexer) atTerminator() bool {
	if l.pos == len(l.text) || strings.HasPrefix(l.text[l.pos:], "}}") {
		return true
	}
	return strings.IndexByte(spaceChars+".,|:()", l.text[l.pos]) >= 0
}

// lexQuote lexes a quoted string or character constant from start, the
// opening quote.
func (l *lexer) lexQuote(start int, quote byte, kind tokKind, unterminated string) bool {
	for {
		if l.pos == len(l.text) || l.text[l.pos] == '\n' {
			return l.fail(start, "%s", unterminated)
		}
		c := l.text[l.pos]
		l.pos++
		switch c {
		case '\\':
			if l.pos == len(l.text) || l.text[l.pos] == '\n' {
				return l.fail(start, "%s", unterminated)
			}
			_, w := utf8.DecodeRuneInString(l.text[l.pos:])
			l.pos += w
		case quote:
			l.emit(kind, start, l.text[start:l.pos])
			return true
		}
	}
}

func (l *lexer) lexRaw(start int) bool {
	end := strings.IndexByte(l.text[l.pos:], '`')
	if end < 0 {
		return l.fail(start, "unterminated raw quoted string")
	}
	l.pos += end + 1
	l.emit(tRawString, start, l.text[start:l.pos])
	return true
}

// lexNumber lexes a number from start as text/template's lexer does; Parse
// converts it.
func (l *lexer) lexNumber(start int) bool {
	l.pos = start
	if !l.scanNumber() {
		return l.fail(start, "bad number syntax: %q", l.text[start:l.pos])
	}
	kind := tNumber
	if l.pos < len(l.text) && (l.text[l.pos] == '+' || l.text[l.pos] == '-') {
		if !l.scanNumber() || l.text[l.pos-1] != 'i' {
			return l.fail(start, "bad number syntax: %q", l.text[start:l.pos])
		}
		kind = tComplex
	}
	l.emit(kind, start, l.text[start:l.pos])
	return true
}

func (l *lexer) scanNumber() bool {
	l.accept("+-")
	digits := "0123456789_"
	if l.accept("0") {
		switch {
		case l.accept("xX"):
			digits = "0123456789abcdefABCDEF_"
		case l.accept("oO"):
			digits = "01234567_"
		case l.accept("bB"):
			digits = "01_"
		}
	}
	l.acceptRun(digits)
	if l.accept(".") {
		l.acceptRun(digits)
	}
	if len(digits) == 11 && l.accept("eE") {
		l.accept("+-")
		l.acceptRun("0123456789_")
	}
	if len(digits) == 23 && l.accept("pP") {
		l.accept("+-")
		l.acceptRun("0123456789_")
	}
	l.accept("i")
	if r, w := utf8.DecodeRuneInString(l.text[l.pos:]); w > 0 && isAlphaNumeric(r) {
		l.pos += w
		return false
	}
	return true
}

// accept moves past the next byte if it is one of valid.
func (l *lexer) accept(valid string) bool {
	if l.pos < len(l.text) && strings.IndexByte(valid, l.text[l.pos]) >= 0 {
		l.pos++
		return true
	}
	return false
}

func (l *lexer) acceptRun(valid string) {
	for l.accept(valid) {
	}
}
