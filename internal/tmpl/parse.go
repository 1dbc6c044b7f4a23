package tmpl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Template is a parsed template of the subset this package runs.
type Template struct {
	name  string
	text  string
	root  []node
	funcs map[string]Func
}

// Name returns the template's name, as given to [Parse].
func (t *Template) Name() string { return t.name }

// unsupportedBuiltins are text/template's functions this package does not
// run: a template calling one is rejected by name, not as calling an
// undefined function.
var unsupportedBuiltins = []string{"call", "html", "index", "js", "slice", "urlquery"}

// maxParenDepth bounds the nesting of parentheses, which Parse and Render
// follow by recursion, where text/template's parser does.
const maxParenDepth = 10000

// Parse parses text, rejecting anything outside the subset this package
// runs (see the package documentation) and what text/template rejects.
// funcs are the functions the template may call besides the built-in
// ones.
func Parse(name, text string, funcs map[string]Func) (*Template, error) {
	t := &Template{name: name, text: text, funcs: funcs}
	p := &parser{t: t, toks: lex(text)}
	root, stop, err := p.items()
	if err != nil {
		return nil, err
	}
	if stop.kind != tEOF {
		return nil, t.errorf(stop.pos, "unexpected {{%s}}", stop.val)
	}
	t.root = root
	return t, nil
}

// loc is "name:line:column" of the byte at pos of the text.
func (t *Template) loc(pos int) string {
	before := t.text[:pos]
	line := 1 + strings.Count(before, "\n")
	return fmt.Sprintf("%s:%d:%d", t.name, line, pos-(strings.LastIndex(before, "\n")+1))
}

// errorf is an error at pos of the text.
func (t *Template) errorf(pos int, format string, args ...any) error {
	return fmt.Errorf("template: %s: %s", t.loc(pos), fmt.Sprintf(format, args...))
}

// unsupported is the error for a construct outside the subset, at pos.
func (t *Template) unsupported(pos int, construct string) error {
	names := make([]string, 0, len(t.funcs))
	for n := range t.funcs {
		names = append(names, n)
	}
	slices.Sort(names)
	return t.errorf(pos, "%s is not supported: lro runs a subset of Go's text/template "+
		"(it leaves text/template out, which costs 3 MiB of binary): "+
		"fields (.X, .X.Y, $.X), if/else if/else, with/else, pipelines with |, string, number and bool constants, "+
		"and the functions and, or, not, eq, ne, lt, le, gt, ge, len, print, printf, println, %s",
		construct, strings.Join(names, ", "))
}

// parser is a recursive-descent parser over the tokens of a template.
type parser struct {
	t     *Template
	toks  []token
	i     int
	depth int // of parentheses
}

// next returns the next token; the last one (EOF or an error) repeats.
func (p *parser) next() token {
	tok := p.toks[min(p.i, len(p.toks)-1)]
	p.i++
	return tok
}

func (p *parser) backup() { p.i-- }

func (p *parser) peek() token {
	tok := p.next()
	p.backup()
	return tok
}

func (p *parser) nextNonSpace() token {
	tok := p.next()
	for tok.kind == tSpace {
		tok = p.next()
	}
	return tok
}

func (p *parser) peekNonSpace() token {
	tok := p.nextNonSpace()
	p.backup()
	return tok
}

// unexpected is the error for tok in context; a lexer's error is itself.
func (p *parser) unexpected(tok token, context string) error {
	switch tok.kind {
	case tError:
		return p.t.errorf(tok.pos, "%s", tok.val)
	case tEOF:
		return p.t.errorf(tok.pos, "unexpected end of text in %s", context)
	case tRight:
		return p.t.errorf(tok.pos, "unexpected }} in %s", context)
	case tKeyword:
		return p.t.errorf(tok.pos, "unexpected {{%s}} in %s", tok.val, context)
	}
	return p.t.errorf(tok.pos, "unexpected %q in %s", tok.val, context)
}

// items parses text and actions up to {{end}}, {{else}} or the end of the
// text, and returns the token that stopped it: the keyword (end, else) or
// EOF.
func (p *parser) items() ([]node, token, error) {
	var list []node
	for {
		switch tok := p.next(); tok.kind {
		case tText:
			list = append(list, textNode(tok.val))
		case tLeft:
			n, stop, err := p.action()
			if err != nil || n == nil {
				return list, stop, err
			}
			list = append(list, n)
		case tEOF:
			return list, tok, nil
		default:
			return nil, tok, p.unexpected(tok, "text")
		}
	}
}

// action parses an action after its {{ and returns its node and first
// token; at {{end}} or {{else}} it returns no node, and the keyword's
// token stops the list it is in.
func (p *parser) action() (node, token, error) {
	tok := p.nextNonSpace()
	if tok.kind != tKeyword || tok.val == "nil" {
		p.backup()
		pipe, err := p.pipeline(tRight, "action")
		return pipe, tok, err
	}
	switch tok.val {
	case "if", "with":
		n, err := p.branch(tok)
		return n, tok, err
	case "else":
		// {{else if}} and {{else with}} continue with the keyword.
		if next := p.peekNonSpace(); next.kind == tKeyword && (next.val == "if" || next.val == "with") {
			return nil, tok, nil
		}
		return nil, tok, p.expectRight(tok)
	case "end":
		return nil, tok, p.expectRight(tok)
	}
	construct := "{{" + tok.val + "}}"
	if name := p.peekNonSpace(); name.kind == tString || name.kind == tRawString {
		construct = "{{" + tok.val + " " + name.val + "}}"
	}
	return nil, tok, p.t.unsupported(tok.pos, construct)
}

// expectRight checks that }} follows the keyword kw.
func (p *parser) expectRight(kw token) error {
	if tok := p.nextNonSpace(); tok.kind != tRight {
		return p.unexpected(tok, "{{"+kw.val+"}}")
	}
	return nil
}

// branch parses {{if}} or {{with}} after the keyword kw, up to its
// {{end}}.
func (p *parser) branch(kw token) (*branchNode, error) {
	context := "{{" + kw.val + "}}"
	pipe, err := p.pipeline(tRight, context)
	if err != nil {
		return nil, err
	}
	b := &branchNode{with: kw.val == "with", pipe: pipe}
	list, stop, err := p.items()
	if err != nil {
		return nil, err
	}
	b.list = list
	if stop.kind == tEOF {
		return nil, p.t.errorf(stop.pos, "unexpected end of text: %s at %s has no {{end}}", context, p.t.loc(kw.pos))
	}
	if stop.val == "end" {
		return b, nil
	}
	if next := p.peekNonSpace(); next.kind == tKeyword && (next.val == "if" || next.val == "with") {
		if next.val != kw.val {
			return nil, p.t.errorf(next.pos, "unexpected {{else %s}} in %s", next.val, context)
		}
		p.nextNonSpace()
		inner, err := p.branch(next)
		if err != nil {
			return nil, err
		}
		b.elseList = []node{inner}
		return b, nil
	}
	if b.elseList, stop, err = p.items(); err != nil {
		return nil, err
	}
	switch {
	case stop.kind == tEOF:
		return nil, p.t.errorf(stop.pos, "unexpected end of text: %s at %s has no {{end}}", context, p.t.loc(kw.pos))
	case stop.val != "end":
		return nil, p.t.errorf(stop.pos, "unexpected {{%s}} after {{else}} in %s", stop.val, context)
	}
	return b, nil
}

// pipeline parses commands joined by | up to the token end (}} or )).
func (p *parser) pipeline(end tokKind, context string) (*pipeNode, error) {
	pipe := &pipeNode{pos: p.peekNonSpace().pos}
	for {
		tok := p.nextNonSpace()
		if tok.kind == end {
			if len(pipe.cmds) == 0 {
				return nil, p.t.errorf(tok.pos, "missing value for %s", context)
			}
			pipe.end = tok.pos
			return pipe, nil
		}
		switch tok.kind {
		case tBool, tChar, tComplex, tDot, tField, tIdent, tNumber, tRawString, tString, tVar, tLParen:
		default:
			if tok.kind != tKeyword || tok.val != "nil" {
				return nil, p.unexpected(tok, context)
			}
		}
		p.backup()
		// As in text/template, a | before the end adds nothing: {{.A |}}
		// is {{.A}}.
		cmd, err := p.command()
		if err != nil {
			return nil, err
		}
		if err := p.checkCommand(cmd, len(pipe.cmds) > 0); err != nil {
			return nil, err
		}
		pipe.cmds = append(pipe.cmds, cmd)
	}
}

// command parses operands separated by spaces, up to a |, which it
// consumes, or the end of the pipeline.
func (p *parser) command() (*command, error) {
	cmd := &command{}
	for {
		op, err := p.operand()
		if err != nil {
			return nil, err
		}
		if op != nil {
			cmd.args = append(cmd.args, op)
		}
		switch tok := p.next(); tok.kind {
		case tSpace:
			continue
		case tRight, tRParen:
			p.backup()
			return cmd, nil
		case tPipe:
			return cmd, nil
		case tDeclare:
			return nil, p.t.unsupported(tok.pos, "declaring or assigning a variable ("+tok.val+")")
		default:
			return nil, p.unexpected(tok, "operand")
		}
	}
}

// operand parses a term and the fields that follow it: .X.Y, $.X,
// (pipeline).X, fn.X.
func (p *parser) operand() (*operand, error) {
	op, err := p.term()
	if op == nil || err != nil {
		return op, err
	}
	bare := op.kind == dotOperand && len(op.names) == 0 ||
		op.kind == boolOperand || op.kind == numberOperand || op.kind == stringOperand
	for p.peek().kind == tField {
		tok := p.next()
		if bare {
			return nil, p.t.errorf(tok.pos, "unexpected %s after %s", tok.val, p.t.text[op.pos:op.end])
		}
		op.names = append(op.names, tok.val[1:])
		op.end = tok.pos + len(tok.val)
	}
	return op, nil
}

// term parses a single operand, or returns nil, consuming nothing but
// spaces, if none is next.
func (p *parser) term() (*operand, error) {
	tok := p.nextNonSpace()
	op := &operand{pos: tok.pos, end: tok.pos + len(tok.val)}
	switch tok.kind {
	case tIdent:
		op.kind, op.name = callOperand, tok.val
		return op, p.t.checkFunc(tok)
	case tDot:
		op.kind = dotOperand
	case tField:
		op.kind, op.names = dotOperand, []string{tok.val[1:]}
	case tVar:
		if tok.val != "$" {
			return nil, p.t.unsupported(tok.pos, fmt.Sprintf("the variable %s (variables other than $)", tok.val))
		}
		op.kind = rootOperand
	case tBool:
		op.kind, op.b = boolOperand, tok.val == "true"
	case tNumber, tChar:
		if strings.HasSuffix(tok.val, "i") && tok.kind == tNumber {
			return nil, p.t.unsupported(tok.pos, "the complex number "+tok.val)
		}
		num, err := parseNumber(tok)
		if err != nil {
			return nil, p.t.errorf(tok.pos, "%v", err)
		}
		op.kind, op.num = numberOperand, num
	case tComplex:
		return nil, p.t.unsupported(tok.pos, "the complex number "+tok.val)
	case tString, tRawString:
		s, err := strconv.Unquote(tok.val)
		if err != nil {
			return nil, p.t.errorf(tok.pos, "invalid string %s: %v", tok.val, err)
		}
		op.kind, op.s = stringOperand, s
	case tLParen:
		if p.depth == maxParenDepth {
			return nil, p.t.errorf(tok.pos, "parentheses nested deeper than %d", maxParenDepth)
		}
		p.depth++
		pipe, err := p.pipeline(tRParen, "parenthesized pipeline")
		p.depth--
		if err != nil {
			return nil, err
		}
		op.kind, op.pipe, op.end = pipeOperand, pipe, pipe.end+1
	default:
		if tok.kind == tKeyword && tok.val == "nil" {
			return nil, p.t.unsupported(tok.pos, "nil")
		}
		p.backup()
		return nil, nil
	}
	return op, nil
}
