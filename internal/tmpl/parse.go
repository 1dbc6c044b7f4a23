package tmpl

import (
	"fmt"
	"slices"
	"strings"
	"text/template/parse"
)

// Template is a parsed template of the subset this package runs.
type Template struct {
	name  string
	tree  *parse.Tree
	funcs map[string]Func
}

// Name returns the template's name, as given to [Parse].
func (t *Template) Name() string { return t.name }

// unsupportedBuiltins are text/template's functions this package does not
// run. They are known to the parser, so that a template calling one parses
// as it does under text/template and is then rejected by name.
var unsupportedBuiltins = []string{"call", "html", "index", "js", "slice", "urlquery"}

// Parse parses text as text/template does, then rejects anything outside
// the subset this package runs (see the package documentation). funcs are
// the functions the template may call besides the built-in ones.
func Parse(name, text string, funcs map[string]Func) (*Template, error) {
	known := make(map[string]any, len(builtins)+len(unsupportedBuiltins)+len(funcs))
	for n := range builtins {
		known[n] = true
	}
	for _, n := range unsupportedBuiltins {
		known[n] = true
	}
	for n := range funcs {
		known[n] = true
	}
	tree := parse.New(name)
	trees := make(map[string]*parse.Tree)
	if _, err := tree.Parse(text, "", "", trees, known); err != nil {
		return nil, err
	}
	t := &Template{name: name, tree: tree, funcs: funcs}
	if err := t.check(tree.Root); err != nil {
		return nil, err
	}
	// {{define}} (and {{block}}) add trees of their own, and a {{define}}
	// of the template's own name replaces an empty main tree.
	for n, other := range trees {
		if other != tree {
			loc, _ := other.ErrorContext(other.Root)
			return nil, t.unsupported(loc, fmt.Sprintf("{{define %q}}", n))
		}
	}
	return t, nil
}

// unsupported is the error for a construct outside the subset, at loc
// ("name:line:col").
func (t *Template) unsupported(loc, construct string) error {
	names := make([]string, 0, len(t.funcs))
	for n := range t.funcs {
		names = append(names, n)
	}
	slices.Sort(names)
	return fmt.Errorf("template: %s: %s is not supported: lro runs a subset of Go's text/template "+
		"(it leaves text/template's executor out, which costs 3 MiB of binary): "+
		"fields (.X, .X.Y, $.X), if/else if/else, with/else, pipelines with |, string, number and bool constants, "+
		"and the functions and, or, not, eq, ne, lt, le, gt, ge, len, print, printf, println, %s",
		loc, construct, strings.Join(names, ", "))
}

// reject is unsupported at node n.
func (t *Template) reject(n parse.Node, construct string) error {
	loc, _ := t.tree.ErrorContext(n)
	return t.unsupported(loc, construct)
}

// check walks the tree and rejects what Render would not run.
func (t *Template) check(n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := t.check(c); err != nil {
				return err
			}
		}
		return nil
	case *parse.TextNode, *parse.CommentNode:
		return nil
	case *parse.ActionNode:
		return t.checkPipe(n.Pipe)
	case *parse.IfNode:
		return t.checkBranch(&n.BranchNode)
	case *parse.WithNode:
		return t.checkBranch(&n.BranchNode)
	case *parse.RangeNode:
		return t.reject(n, "{{range}}")
	case *parse.TemplateNode:
		return t.reject(n, fmt.Sprintf("{{template %q}} (and {{block}})", n.Name))
	case *parse.BreakNode:
		return t.reject(n, "{{break}}")
	case *parse.ContinueNode:
		return t.reject(n, "{{continue}}")
	}
	return t.reject(n, fmt.Sprintf("%q", n))
}

func (t *Template) checkBranch(b *parse.BranchNode) error {
	if err := t.checkPipe(b.Pipe); err != nil {
		return err
	}
	if err := t.check(b.List); err != nil {
		return err
	}
	return t.check(b.ElseList)
}

func (t *Template) checkPipe(p *parse.PipeNode) error {
	if len(p.Decl) > 0 {
		return t.reject(p, fmt.Sprintf("the variable %s (variables other than $)", p.Decl[0]))
	}
	for i, c := range p.Cmds {
		if err := t.checkCommand(c, i > 0); err != nil {
			return err
		}
	}
	return nil
}

// checkCommand checks a command of a pipeline; piped says the previous
// command's value is its last argument.
func (t *Template) checkCommand(c *parse.CommandNode, piped bool) error {
	first := c.Args[0]
	if id, ok := first.(*parse.IdentifierNode); ok {
		n := len(c.Args) - 1
		if piped {
			n++
		}
		if err := t.checkCall(id, n); err != nil {
			return err
		}
	} else if len(c.Args) > 1 || piped {
		return t.reject(first, fmt.Sprintf("giving arguments to %s (only functions take arguments; methods are not called)", first))
	} else if err := t.checkArg(first); err != nil {
		return err
	}
	for _, a := range c.Args[1:] {
		if err := t.checkArg(a); err != nil {
			return err
		}
	}
	return nil
}

// checkCall checks a call of the function id with n arguments.
func (t *Template) checkCall(id *parse.IdentifierNode, n int) error {
	lo, hi := 1, 1
	if b, ok := builtins[id.Ident]; ok {
		lo, hi = b.min, b.max
	} else if _, ok := t.funcs[id.Ident]; !ok {
		return t.reject(id, fmt.Sprintf("the function %s", id.Ident))
	}
	if n < lo || hi >= 0 && n > hi {
		want := fmt.Sprint(lo)
		switch {
		case hi < 0:
			want = fmt.Sprintf("at least %d", lo)
		case hi != lo:
			want = fmt.Sprintf("%d to %d", lo, hi)
		}
		loc, _ := t.tree.ErrorContext(id)
		return fmt.Errorf("template: %s: wrong number of args for %s: want %s got %d", loc, id.Ident, want, n)
	}
	return nil
}

func (t *Template) checkArg(a parse.Node) error {
	switch a := a.(type) {
	case *parse.NilNode:
		return t.reject(a, "nil")
	case *parse.NumberNode:
		if a.IsComplex {
			return t.reject(a, fmt.Sprintf("the complex number %s", a.Text))
		}
	case *parse.VariableNode:
		if a.Ident[0] != "$" {
			return t.reject(a, fmt.Sprintf("the variable %s (variables other than $)", a.Ident[0]))
		}
	case *parse.IdentifierNode:
		return t.checkCall(a, 0)
	case *parse.PipeNode:
		return t.checkPipe(a)
	case *parse.ChainNode:
		return t.checkArg(a.Node)
	}
	return nil
}
