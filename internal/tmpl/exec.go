package tmpl

import (
	"fmt"
	"strings"
	"text/template/parse"
)

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
	if err := s.walk(data, t.tree.Root); err != nil {
		return "", err
	}
	return s.out.String(), nil
}

// errorf is an error at node n.
func (s *state) errorf(n parse.Node, format string, args ...any) error {
	loc, context := s.t.tree.ErrorContext(n)
	return fmt.Errorf("template: %s: executing %q at <%s>: %s", loc, s.t.name, context, fmt.Sprintf(format, args...))
}

func (s *state) walk(dot any, n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			if err := s.walk(dot, c); err != nil {
				return err
			}
		}
	case *parse.TextNode:
		s.out.Write(n.Text)
	case *parse.CommentNode:
	case *parse.ActionNode:
		v, err := s.pipeline(dot, n.Pipe)
		if err != nil {
			return err
		}
		fmt.Fprint(&s.out, v)
	case *parse.IfNode:
		return s.branch(dot, &n.BranchNode, false)
	case *parse.WithNode:
		return s.branch(dot, &n.BranchNode, true)
	default:
		// Parse rejected every other node.
		return s.errorf(n, "unsupported node %s", n)
	}
	return nil
}

// branch walks an if (or, with, a with): the list when the pipeline's
// value is true, else the else list.
func (s *state) branch(dot any, b *parse.BranchNode, with bool) error {
	v, err := s.pipeline(dot, b.Pipe)
	if err != nil {
		return err
	}
	switch {
	case truth(v) && with:
		return s.walk(v, b.List)
	case truth(v):
		return s.walk(dot, b.List)
	case b.ElseList != nil:
		return s.walk(dot, b.ElseList)
	}
	return nil
}

// pipeline evaluates the commands of p in turn, each one's value the last
// argument of the next.
func (s *state) pipeline(dot any, p *parse.PipeNode) (any, error) {
	var v any
	for i, c := range p.Cmds {
		var err error
		if v, err = s.command(dot, c, v, i > 0); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// command evaluates c; piped says final, the previous command's value, is
// its last argument.
func (s *state) command(dot any, c *parse.CommandNode, final any, piped bool) (any, error) {
	switch first := c.Args[0].(type) {
	case *parse.IdentifierNode:
		return s.call(dot, first, c.Args[1:], final, piped)
	case *parse.BoolNode, *parse.NumberNode, *parse.StringNode, *parse.DotNode,
		*parse.FieldNode, *parse.ChainNode, *parse.VariableNode, *parse.PipeNode:
		// Parse made sure no arguments follow.
		return s.arg(dot, first)
	}
	return nil, s.errorf(c, "unsupported command %s", c)
}

// arg evaluates a node that is not a function call with arguments.
func (s *state) arg(dot any, n parse.Node) (any, error) {
	switch n := n.(type) {
	case *parse.BoolNode:
		return n.True, nil
	case *parse.StringNode:
		return n.Text, nil
	case *parse.NumberNode:
		return s.idealConstant(n)
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode:
		return s.fields(n, dot, n.Ident)
	case *parse.VariableNode:
		// $ is the only variable.
		return s.fields(n, s.root, n.Ident[1:])
	case *parse.ChainNode:
		v, err := s.arg(dot, n.Node)
		if err != nil {
			return nil, err
		}
		return s.fields(n, v, n.Field)
	case *parse.PipeNode:
		return s.pipeline(dot, n)
	case *parse.IdentifierNode:
		return s.call(dot, n, nil, nil, false)
	}
	return nil, s.errorf(n, "unsupported argument %s", n)
}

// idealConstant is the value of a number where any type goes, as
// text/template's: a float when written as one, else an int.
func (s *state) idealConstant(n *parse.NumberNode) (any, error) {
	text := n.Text
	hexInt := len(text) > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') && !strings.ContainsAny(text, "pP")
	runeInt := text[0] == '\''
	switch {
	case n.IsFloat && !hexInt && !runeInt && strings.ContainsAny(text, ".eEpP"):
		return n.Float64, nil
	case n.IsInt:
		return int(n.Int64), nil
	}
	return nil, s.errorf(n, "%s overflows int", text)
}

// fields looks the names up in turn, from v.
func (s *state) fields(n parse.Node, v any, names []string) (any, error) {
	for _, name := range names {
		f, ok := v.(Fields)
		if !ok {
			return nil, s.errorf(n, "can't evaluate field %s in type %T", name, v)
		}
		if v, ok = f[name]; !ok {
			return nil, s.errorf(n, "map has no entry for key %q", name)
		}
		if _, err := kindOf(v); err != nil {
			return nil, s.errorf(n, "field %s holds %v", name, err)
		}
	}
	return v, nil
}

// call calls the function id with args and, when piped, final last.
func (s *state) call(dot any, id *parse.IdentifierNode, args []parse.Node, final any, piped bool) (any, error) {
	name := id.Ident
	if name == "and" || name == "or" {
		return s.andOr(dot, name == "or", args, final, piped)
	}
	if f, ok := s.t.funcs[name]; ok {
		return s.callFunc(dot, id, f, args, final, piped)
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
			return nil, s.errorf(id, "wrong type for value; expected string; got %T", final)
		}
		argv = append(argv, final)
	}
	if len(argv) < b.min || b.max >= 0 && len(argv) > b.max || b.call == nil {
		return nil, s.errorf(id, "wrong number of args for %s", name)
	}
	v, err := b.call(argv)
	if err != nil {
		return nil, s.errorf(id, "error calling %s: %v", name, err)
	}
	return v, nil
}

// format evaluates printf's format, which must be a string.
func (s *state) format(dot any, a parse.Node) (any, error) {
	switch a.(type) {
	case *parse.BoolNode, *parse.NumberNode:
		return nil, s.errorf(a, "expected string; found %s", a)
	}
	v, err := s.arg(dot, a)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(string); !ok {
		return nil, s.errorf(a, "wrong type for value; expected string; got %T", v)
	}
	return v, nil
}

// andOr evaluates and (or) as text/template does: it returns the first
// argument that is false (true), else the last.
func (s *state) andOr(dot any, or bool, args []parse.Node, final any, piped bool) (any, error) {
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
func (s *state) callFunc(dot any, id *parse.IdentifierNode, f Func, args []parse.Node, final any, piped bool) (any, error) {
	if len(args)+btoi(piped) != 1 {
		return nil, s.errorf(id, "wrong number of args for %s: want 1 got %d", id.Ident, len(args)+btoi(piped))
	}
	v := final
	if !piped {
		switch a := args[0].(type) {
		case *parse.NumberNode:
			if !a.IsInt {
				return nil, s.errorf(a, "expected integer; found %s", a)
			}
			v = f.constant(a.Int64)
		case *parse.BoolNode, *parse.StringNode:
			return nil, s.errorf(a, "expected integer; found %s", a)
		default:
			var err error
			if v, err = s.arg(dot, a); err != nil {
				return nil, err
			}
		}
	}
	r, err := f.call(v)
	if err != nil {
		return nil, s.errorf(id, "%v", err)
	}
	return r, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
