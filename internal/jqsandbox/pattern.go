package jqsandbox

import (
	"regexp/syntax"
)

// PatternCost returns what compiling re costs as the regular expression of
// a jq regex builtin (test, match, capture, scan, split, sub, gsub) with
// flags: the instructions of its program, plus one for every eight
// character-class ranges. A value bound to a variable that a trusted query
// uses as a pattern goes through no guard: its caller bounds it with this.
// A pattern that does not parse costs 0: gojq refuses it.
//
// The cost is computed without compiling a large program: an estimate
// comes first, and a pattern estimated past a million instructions is
// given that estimate.
func PatternCost(re, flags string) int {
	parsed, err := syntax.Parse(withFlags(re, flags), syntax.Perl)
	if err != nil {
		return 0
	}
	if est := regexSizeOf(parsed); est > 1<<20 {
		return int(min(est, 1<<40))
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return 0
	}
	cost := len(prog.Inst)
	for _, in := range prog.Inst {
		cost += len(in.Rune) / 16 // pairs of runes: ranges / 8
	}
	return cost
}

// withFlags prefixes re with the flags gojq gives the compiler.
func withFlags(re, flags string) string {
	prefix := ""
	for _, f := range flags {
		switch f {
		case 'i':
			prefix += "(?i)"
		case 'm':
			prefix += "(?s)"
		}
	}
	return prefix + re
}
