package tmpl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// checkFunc checks that the identifier tok names a function the template
// may call.
func (t *Template) checkFunc(tok token) error {
	if _, ok := builtins[tok.val]; ok {
		return nil
	}
	if _, ok := t.funcs[tok.val]; ok {
		return nil
	}
	if slices.Contains(unsupportedBuiltins, tok.val) {
		return t.unsupported(tok.pos, "the function "+tok.val)
	}
	return t.errorf(tok.pos, "function %q not defined", tok.val)
}

// checkCommand checks what Render would reject of a command whatever the
// data: arguments given to what is not a function, and a function given
// too few or too many. piped says the previous command's value is its
// last argument.
func (p *parser) checkCommand(c *command, piped bool) error {
	first := c.args[0]
	if first.kind == callOperand && len(first.names) == 0 {
		if err := p.t.checkCall(first, len(c.args)-1+btoi(piped)); err != nil {
			return err
		}
	} else if len(c.args) > 1 || piped {
		return p.t.unsupported(first.pos, fmt.Sprintf("giving arguments to %s (only functions take arguments; methods are not called)",
			p.t.text[first.pos:first.end]))
	} else if first.kind == callOperand {
		return p.t.checkCall(first, 0)
	}
	for _, a := range c.args[1:] {
		if a.kind == callOperand {
			if err := p.t.checkCall(a, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCall checks a call of the function op with n arguments.
func (t *Template) checkCall(op *operand, n int) error {
	lo, hi := 1, 1
	if b, ok := builtins[op.name]; ok {
		lo, hi = b.min, b.max
	}
	if n >= lo && (hi < 0 || n <= hi) {
		return nil
	}
	want := fmt.Sprint(lo)
	switch {
	case hi < 0:
		want = fmt.Sprintf("at least %d", lo)
	case hi != lo:
		want = fmt.Sprintf("%d to %d", lo, hi)
	}
	return t.errorf(op.pos, "wrong number of args for %s: want %s got %d", op.name, want, n)
}

// parseNumber reads a number or character constant as text/template's
// parser does.
func parseNumber(tok token) (number, error) {
	text := tok.val
	if tok.kind == tChar {
		r, _, tail, err := strconv.UnquoteChar(text[1:], '\'')
		if err != nil || tail != "'" {
			return number{}, fmt.Errorf("malformed character constant: %s", text)
		}
		return number{isInt: true, int: int64(r), float: float64(r)}, nil
	}
	if i, err := strconv.ParseInt(text, 0, 64); err == nil {
		return number{isInt: true, int: i, float: float64(i)}, nil
	}
	if u, err := strconv.ParseUint(text, 0, 64); err == nil {
		return number{float: float64(u)}, nil // an integer beyond int64: Render rejects it
	}
	f, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil:
		return number{}, fmt.Errorf("illegal number syntax: %q", text)
	case !strings.ContainsAny(text, ".eEpP"):
		return number{}, fmt.Errorf("integer overflow: %q", text)
	}
	n := number{float: f}
	if float64(int64(f)) == f {
		n.isInt, n.int = true, int64(f)
	}
	return n, nil
}
