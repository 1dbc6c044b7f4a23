package tmpl

import (
	"fmt"
	"strings"
)

// MaxOutput is the most bytes one rendering of a template may print, and
// the most a value it makes (print's, printf's) may hold: a template that
// writes past it fails with an error naming it, and a printf width or
// precision past it fails before it is formatted. Guidance and recipes
// are a few hundred bytes; 2,000 actions {{printf "%999999d" 1}} in an
// override made lro.New allocate 2.5 GiB.
const MaxOutput = 64 << 10

// state is one rendering of a template.
type state struct {
	t    *Template
	root Fields // $
	out  strings.Builder
}

// Render executes the template over data and returns what it printed.
// Errors name the template, the line and the action, as text/template's
// do.
func (t *Template) Render(data Fields) (string, error) {
	s := &state{t: t, root: data}
	if err := s.walk(data, t.root); err != nil {
		return "", err
	}
	return s.out.String(), nil
}

// errorf is an error in the text from pos to end.
func (s *state) errorf(pos, end int, format string, args ...any) error {
	return fmt.Errorf("template: %s: executing %q at <%s>: %s", s.t.loc(pos), s.t.name, s.t.text[pos:end], fmt.Sprintf(format, args...))
}

func (s *state) walk(dot any, list []node) error {
	for _, n := range list {
		switch n := n.(type) {
		case textNode:
			s.out.WriteString(string(n))
		case *pipeNode:
			v, err := s.pipeline(dot, n)
			if err != nil {
				return err
			}
			fmt.Fprint(&s.out, v)
			if s.out.Len() > MaxOutput {
				return s.errorf(n.pos, n.end, "the output is over the %d bytes a template may print", MaxOutput)
			}
		case *branchNode:
			if err := s.branch(dot, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// branch walks an if (or, with, a with): the list when the pipeline's
// value is true, else the else list.
func (s *state) branch(dot any, b *branchNode) error {
	v, err := s.pipeline(dot, b.pipe)
	if err != nil {
		return err
	}
	switch {
	case truth(v) && b.with:
		return s.walk(v, b.list)
	case truth(v):
		return s.walk(dot, b.list)
	}
	return s.walk(dot, b.elseList)
}

// pipeline evaluates the commands of p in turn, each one's value the last
// argument of the next.
func (s *state) pipeline(dot any, p *pipeNode) (any, error) {
	var v any
	for i, c := range p.cmds {
		var err error
		if v, err = s.command(dot, c, v, i > 0); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// command evaluates c; piped says final, the previous command's value, is
// its last argument.
func (s *state) command(dot any, c *command, final any, piped bool) (any, error) {
	first := c.args[0]
	if first.kind == callOperand && len(first.names) == 0 {
		return s.call(dot, first, c.args[1:], final, piped)
	}
	// Parse made sure no arguments follow.
	return s.arg(dot, first)
}

// arg evaluates an operand that is not a function call with arguments.
func (s *state) arg(dot any, a *operand) (any, error) {
	var v any
	switch a.kind {
	case boolOperand:
		return a.b, nil
	case stringOperand:
		return a.s, nil
	case numberOperand:
		return s.idealConstant(a)
	case dotOperand:
		v = dot
	case rootOperand:
		v = s.root
	case pipeOperand, callOperand:
		var err error
		if a.kind == pipeOperand {
			v, err = s.pipeline(dot, a.pipe)
		} else {
			v, err = s.call(dot, a, nil, nil, false)
		}
		if err != nil {
			return nil, err
		}
	}
	return s.fields(a, v)
}

// idealConstant is the value of a number where any type goes, as
// text/template's: a float when written as one, else an int.
func (s *state) idealConstant(a *operand) (any, error) {
	text := s.t.text[a.pos:a.end]
	hexInt := len(text) > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') && !strings.ContainsAny(text, "pP")
	runeInt := text[0] == '\''
	switch {
	case !hexInt && !runeInt && strings.ContainsAny(text, ".eEpP"):
		return a.num.float, nil
	case a.num.isInt:
		return int(a.num.int), nil
	}
	return nil, s.errorf(a.pos, a.end, "%s overflows int", text)
}

// fields looks a's names up in turn, from v.
func (s *state) fields(a *operand, v any) (any, error) {
	for _, name := range a.names {
		f, ok := v.(Fields)
		if !ok {
			return nil, s.errorf(a.pos, a.end, "can't evaluate field %s in type %T", name, v)
		}
		if v, ok = f[name]; !ok {
			return nil, s.errorf(a.pos, a.end, "map has no entry for key %q", name)
		}
		if _, err := kindOf(v); err != nil {
			return nil, s.errorf(a.pos, a.end, "field %s holds %v", name, err)
		}
	}
	return v, nil
}

// call calls the function fn with args and, when piped, final last.
func (s *state) call(dot any, fn *operand, args []*operand, final any, piped bool) (any, error) {
	name := fn.name
	if name == "and" || name == "or" {
		return s.andOr(dot, name == "or", args, final, piped)
	}
	if f, ok := s.t.funcs[name]; ok {
		return s.callFunc(dot, fn, f, args, final, piped)
	}
	b := builtins[name]
	argv := make([]any, 0, len(args)+1)
	for i, a := range args {
		if b.format && i == 0 {
			v, err := s.format(dot, a)
			if err != nil {
				return nil, err
			}
			argv = append(argv, v)
			continue
		}
		v, err := s.arg(dot, a)
		if err != nil {
			return nil, err
		}
		argv = append(argv, v)
	}
	if piped {
		if _, ok := final.(string); b.format && len(args) == 0 && !ok {
			return nil, s.errorf(fn.pos, fn.end, "wrong type for value; expected string; got %T", final)
		}
		argv = append(argv, final)
	}
	if len(argv) < b.min || b.max >= 0 && len(argv) > b.max || b.call == nil {
		return nil, s.errorf(fn.pos, fn.end, "wrong number of args for %s", name)
	}
	v, err := b.call(argv)
	if err != nil {
		return nil, s.errorf(fn.pos, fn.end, "error calling %s: %v", name, err)
	}
	if str, ok := v.(string); ok && len(str) > MaxOutput {
		return nil, s.errorf(fn.pos, fn.end, "%s made %d bytes, over the %d a template may print", name, len(str), MaxOutput)
	}
	return v, nil
}

// format evaluates printf's format, which must be a string.
func (s *state) format(dot any, a *operand) (any, error) {
	if a.kind == boolOperand || a.kind == numberOperand {
		return nil, s.errorf(a.pos, a.end, "expected string; found %s", s.t.text[a.pos:a.end])
	}
	v, err := s.arg(dot, a)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(string); !ok {
		return nil, s.errorf(a.pos, a.end, "wrong type for value; expected string; got %T", v)
	}
	return v, nil
}

// andOr evaluates and (or) as text/template does: it returns the first
// argument that is false (true), else the last.
func (s *state) andOr(dot any, or bool, args []*operand, final any, piped bool) (any, error) {
	var v any
	for _, a := range args {
		var err error
		if v, err = s.arg(dot, a); err != nil {
			return nil, err
		}
		if truth(v) == or {
			return v, nil
		}
	}
	if piped {
		v = final
	}
	return v, nil
}

// callFunc calls one of the caller's functions, whose one argument is
// either args[0] or final.
func (s *state) callFunc(dot any, fn *operand, f Func, args []*operand, final any, piped bool) (any, error) {
	if len(args)+btoi(piped) != 1 {
		return nil, s.errorf(fn.pos, fn.end, "wrong number of args for %s: want 1 got %d", fn.name, len(args)+btoi(piped))
	}
	v := final
	if !piped {
		switch a := args[0]; a.kind {
		case numberOperand, boolOperand, stringOperand:
			if a.kind != numberOperand || !a.num.isInt {
				return nil, s.errorf(a.pos, a.end, "expected integer; found %s", s.t.text[a.pos:a.end])
			}
			v = f.constant(a.num.int)
		default:
			var err error
			if v, err = s.arg(dot, a); err != nil {
				return nil, err
			}
		}
	}
	r, err := f.call(v)
	if err != nil {
		return nil, s.errorf(fn.pos, fn.end, "%v", err)
	}
	return r, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
