// Package tmpl runs lro's recipe and guidance templates without
// text/template.
//
// text/template's executor looks methods up by name
// (reflect.Value.MethodByName); once a program calls it, the linker keeps
// every exported method of every type reachable through an interface, in
// the whole program, which made lro add 3.0 MiB to a minimal MCP server
// (issue 33). text/template/parse, its lexer and parser, cost 208 KB
// more. This package has its own: a lexer (lex.go) that splits the text
// as text/template's does (the trim markers {{- -}}, whose space is part
// of the marker, so {{-3}} prints -3; comments; quoting), a
// recursive-descent parser (parse.go, check.go) that builds the nodes of
// node.go for the subset alone, and an executor (exec.go) that walks them
// over [Fields], a map lro builds, never calling a method of the data.
// Tests compare it with text/template: what text/template rejects, Parse
// rejects; what Parse accepts, text/template accepts and prints alike.
//
// It runs this subset of text/template, with text/template's semantics
// (truth of values, comparisons of mixed integer types, and/or that stop
// at the first deciding argument, missingkey=error):
//
//   - text, comments, and actions printing a pipeline as fmt.Fprint does;
//   - fields .X and .X.Y of [Fields], dot, and $ and $.X (the data);
//   - if / else if / else / end, and with / else with / else / end;
//   - pipelines joined by |, and parenthesized pipelines as arguments;
//   - string, number (int and float) and bool constants;
//   - the functions and, or, not, eq, ne, lt, le, gt, ge, len, print,
//     printf, println, and the one-argument functions the caller names
//     (lro's duration and bytes).
//
// Everything else (range, template, define, block, break, continue,
// variables other than $, nil, complex numbers, arguments given to what
// is not a function, call, index, slice, html, js, urlquery) is rejected
// by [Parse], with an error naming the template, the line and the
// construct, so that a template lro cannot run fails at New rather than
// at a tool call; so are syntax errors ("template: NAME:LINE:COL:
// unclosed action"). A method call on a value (.TTL.Hours) cannot be told
// from a field at parse time; it fails when rendered.
package tmpl
