package tmpl

import (
	"fmt"
	"strings"
	"time"
)

// Func is a function of one argument a template may call by name, made by
// [Unary].
type Func struct {
	// call applies the function to a value of the data or of a pipeline,
	// which must be of the function's parameter type.
	call func(v any) (any, error)
	// constant converts an integer constant to the parameter's type, as
	// text/template converts a constant argument.
	constant func(n int64) any
}

// Unary returns a Func calling f, whose parameter is an integer type
// (int or time.Duration): a template passes it a value of exactly that
// type, or an integer constant, as text/template allows.
func Unary[T interface{ int | time.Duration }](f func(T) string) Func {
	return Func{
		call: func(v any) (any, error) {
			x, ok := v.(T)
			if !ok {
				var want T
				return nil, fmt.Errorf("wrong type for value; expected %T; got %T", want, v)
			}
			return f(x), nil
		},
		constant: func(n int64) any { return T(n) },
	}
}

// builtin is one of text/template's functions this package runs.
type builtin struct {
	min, max int // how many arguments it takes; max -1: any number
	// format says the first argument is a format string (printf).
	format bool
	call   func(args []any) (any, error)
}

// builtins are the built-in functions of the subset; and and or, which
// evaluate their arguments only as far as needed, are walked in exec.go.
var builtins = map[string]builtin{
	"and":     {min: 1, max: -1},
	"or":      {min: 1, max: -1},
	"not":     {min: 1, max: 1, call: func(a []any) (any, error) { return !truth(a[0]), nil }},
	"len":     {min: 1, max: 1, call: func(a []any) (any, error) { return length(a[0]) }},
	"eq":      {min: 1, max: -1, call: func(a []any) (any, error) { return eq(a[0], a[1:]...) }},
	"ne":      {min: 2, max: 2, call: ne},
	"lt":      {min: 2, max: 2, call: func(a []any) (any, error) { return lt(a[0], a[1]) }},
	"le":      {min: 2, max: 2, call: le},
	"gt":      {min: 2, max: 2, call: gt},
	"ge":      {min: 2, max: 2, call: ge},
	"print":   {min: 0, max: -1, call: func(a []any) (any, error) { return fmt.Sprint(a...), nil }},
	"println": {min: 0, max: -1, call: func(a []any) (any, error) { return fmt.Sprintln(a...), nil }},
	"printf": {min: 1, max: -1, format: true, call: func(a []any) (any, error) {
		if err := checkWidths(a[0].(string)); err != nil {
			return nil, err
		}
		return fmt.Sprintf(a[0].(string), a[1:]...), nil
	}},
}

// checkWidths refuses a format whose width or precision is over
// MaxOutput, or given by an argument (*), before fmt makes a string of
// that size.
func checkWidths(format string) error {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
	verb:
		for i++; i < len(format); i++ {
			c := format[i]
			switch {
			case c == '*':
				return fmt.Errorf("a width or precision given by an argument (*) is not supported")
			case c >= '0' && c <= '9':
				n := 0
				for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
					n = min(n*10+int(format[i]-'0'), MaxOutput+1)
				}
				if n > MaxOutput {
					return fmt.Errorf("a width or precision over %d", MaxOutput)
				}
				i--
				continue
			case strings.IndexByte("+-# .[]", c) >= 0:
				continue
			}
			break verb
		}
	}
	return nil
}

func ne(a []any) (any, error) {
	equal, err := eq(a[0], a[1])
	return !equal, err
}

func le(a []any) (any, error) {
	less, err := lt(a[0], a[1])
	if less || err != nil {
		return less, err
	}
	return eq(a[0], a[1])
}

func gt(a []any) (any, error) {
	lessOrEqual, err := le(a)
	if err != nil {
		return false, err
	}
	return !lessOrEqual.(bool), nil
}

func ge(a []any) (any, error) {
	less, err := lt(a[0], a[1])
	if err != nil {
		return false, err
	}
	return !less, nil
}
