package jqsandbox

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode"

	"github.com/itchyny/gojq"
)

// gojq's test and match compile their pattern once per compiled query, and
// Go's regexp runs a case-insensitive literal such as (?i)quasar through
// its backtracker at every position: a few microseconds for a short
// string, most of the time of a query searching the records for a word.
// fastMatch answers test, and the matches of a string that cannot match,
// from expressions kept across runs, after ruling out most strings with a
// plain byte search for a literal every match contains. It answers only
// what it answers exactly as gojq would; anything else (a type error, an
// unsupported flag, a pattern that does not compile or is too large to
// keep) goes to gojq's own _match, which reports errors in its words.

// Bounds of the expressions kept: regexCache holds at most maxFastRegexes
// of them, each at most maxFastRegexBytes long and compiled to at most
// maxFastRegexCost instructions (see PatternCost), a few megabytes in all.
// A run adds at most maxFastRegexNew, so that a query whose patterns
// change with every record leaves the others' in place and goes to gojq.
const (
	maxFastRegexes    = 64
	maxFastRegexBytes = 1 << 10
	maxFastRegexCost  = 1 << 10
	maxFastRegexNew   = 16
)

// fastRegex is a compiled expression and a literal every match contains.
type fastRegex struct {
	re *regexp.Regexp // nil: not kept (invalid, or too large)
	// needle is ASCII text that every match contains, "" when none is
	// known; with fold, in lower case, to be found regardless of case.
	needle string
	fold   bool
}

// regexCache keeps the expressions of test and match across runs.
var regexCache = struct {
	sync.Mutex
	byKey map[[2]string]*fastRegex
	order [][2]string // oldest first
}{byKey: map[[2]string]*fastRegex{}}

// matchFunc names the native function behind test and match (see
// matchOption); user queries cannot name it (reservedPrefix).
const matchFunc = "_sbx_match"

// matchOption defines matchFunc($re; $flags; $test), which answers as
// gojq's _match($re; $flags; $test): from regexCache when it can (see
// fastMatch), else through gojq's own _match. With guarded, the call is
// checked first as the sandbox's guards check it (guardMatch).
func matchOption(guarded bool) gojq.CompilerOption {
	fb := &matchFallback{}
	return gojq.WithFunction(matchFunc, 3, 3, func(v any, args []any) any {
		st := current()
		if guarded {
			if err, ok := guardMatch(st, v, args).(error); ok {
				return err
			}
		}
		if x := fastMatch(st, v, args); x != nil {
			return x
		}
		return fb.call(v, args)
	})
}

// matchFallback runs gojq's own _match, for what fastMatch leaves to it
// (errors, in gojq's words; the matches of a string that may match;
// expressions not kept). It is compiled on first use for each compiled
// query, whose lifetime bounds the expressions gojq caches in it, as it
// bounded those gojq cached in the query itself before.
type matchFallback struct {
	once sync.Once
	code *gojq.Code
	err  error
}

func (f *matchFallback) call(v any, args []any) any {
	f.once.Do(func() {
		q, err := gojq.Parse("_match($re; $flags; $test)")
		if err != nil {
			f.err = err
			return
		}
		f.code, f.err = gojq.Compile(q, gojq.WithVariables([]string{"$re", "$flags", "$test"}))
	})
	if f.err != nil {
		return f.err
	}
	x, _ := f.code.Run(v, args...).Next()
	return x
}

// fastMatch answers _match($re; $flags; $test) when it can do so exactly
// as gojq would: for test ($test true) the boolean, for match the empty
// array of a string that cannot match; else it returns nil.
func fastMatch(st *runState, v any, args []any) any {
	s, ok := v.(string)
	re, ok2 := args[0].(string)
	if !ok || !ok2 || len(re) > maxFastRegexBytes {
		return nil
	}
	flags := ""
	switch f := args[1].(type) {
	case nil:
	case string:
		flags = f
	default:
		return nil
	}
	if strings.ContainsFunc(flags, func(r rune) bool { return r != 'g' && r != 'i' && r != 'm' }) {
		return nil // gojq reports the flag
	}
	r := lookupRegex(st, re, flags)
	switch {
	case r == nil || r.re == nil:
		return nil
	case !r.mayMatch(s):
		if args[2] == true {
			return false
		}
		return []any{}
	case args[2] == true:
		return r.re.MatchString(s)
	}
	return nil // matches to list: gojq's
}

// lookupRegex returns the kept expression for (re, flags), compiling it
// when the run may still add one; nil when it may not.
func lookupRegex(st *runState, re, flags string) *fastRegex {
	key := [2]string{re, flags}
	regexCache.Lock()
	r, ok := regexCache.byKey[key]
	regexCache.Unlock()
	if ok {
		return r
	}
	if st.newRegexes >= maxFastRegexNew {
		return nil
	}
	st.newRegexes++
	r = compileFast(re, flags)
	regexCache.Lock()
	defer regexCache.Unlock()
	if _, ok := regexCache.byKey[key]; !ok {
		if len(regexCache.order) >= maxFastRegexes {
			delete(regexCache.byKey, regexCache.order[0])
			regexCache.order = regexCache.order[1:]
		}
		regexCache.byKey[key] = r
		regexCache.order = append(regexCache.order, key)
	}
	return r
}

// compileFast compiles re as gojq does for flags, unless it is too large
// to keep; the result says so with a nil re.
func compileFast(re, flags string) *fastRegex {
	if PatternCost(re, flags) > maxFastRegexCost {
		return &fastRegex{}
	}
	compiled, err := compileRegex(re, flags)
	if err != nil {
		return &fastRegex{}
	}
	r := &fastRegex{re: compiled}
	if parsed, err := syntax.Parse(compiled.String(), syntax.Perl); err == nil {
		r.needle, r.fold = requiredText(parsed)
	}
	return r
}

// mayMatch reports whether s contains the needle (a string that does not
// cannot match).
func (r *fastRegex) mayMatch(s string) bool {
	switch {
	case r.needle == "":
		return true
	case r.fold:
		return containsFold(s, r.needle)
	}
	return strings.Contains(s, r.needle)
}

// requiredText returns the longest ASCII text that every match of re
// contains, of the literals of re or of its top-level concatenation, and
// whether it is to be matched regardless of case (then in lower case).
// Only ASCII runes whose case folds stay ASCII are taken: such a rune
// matches only its own bytes (or its other case's) in a UTF-8 string, and
// never part of another rune or an invalid byte, which the regexp reads
// as U+FFFD. ("k" and "s" fold to the Kelvin sign and the long s.)
func requiredText(re *syntax.Regexp) (string, bool) {
	best, bestFold := "", false
	take := func(lit *syntax.Regexp) {
		if lit = uncapture(lit); lit.Op != syntax.OpLiteral {
			return
		}
		if t, fold := asciiRun(lit); len(t) > len(best) {
			best, bestFold = t, fold
		}
	}
	switch re = uncapture(re); re.Op {
	case syntax.OpLiteral:
		take(re)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			take(sub)
		}
	}
	return best, bestFold
}

// uncapture returns what a capture group (or nested groups) matches.
func uncapture(re *syntax.Regexp) *syntax.Regexp {
	for re.Op == syntax.OpCapture && len(re.Sub) == 1 {
		re = re.Sub[0]
	}
	return re
}

// asciiRun returns the longest run of the literal's runes that can be
// searched for as ASCII bytes (lower case when the literal folds case).
func asciiRun(lit *syntax.Regexp) (string, bool) {
	fold := lit.Flags&syntax.FoldCase != 0
	best, cur := "", []byte(nil)
	for i, r := range lit.Rune {
		ok := r < 0x80 && (!fold || foldsASCII(r))
		if ok {
			if fold {
				r = unicode.ToLower(r)
			}
			cur = append(cur, byte(r))
		}
		if !ok || i == len(lit.Rune)-1 {
			if len(cur) > len(best) {
				best = string(cur)
			}
			cur = cur[:0]
		}
	}
	return best, fold
}

// foldsASCII reports whether every rune that r matches regardless of case
// is ASCII.
func foldsASCII(r rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= 0x80 {
			return false
		}
	}
	return true
}

// containsFold reports whether s contains needle (ASCII, lower case)
// regardless of the case of ASCII letters.
func containsFold(s, needle string) bool {
	first := needle[0]
	upper := first
	if 'a' <= first && first <= 'z' {
		upper -= 'a' - 'A'
	}
	for i := 0; i+len(needle) <= len(s); i++ {
		j := indexEither(s[i:len(s)-len(needle)+1], first, upper)
		if j < 0 {
			return false
		}
		i += j
		if equalFold(s[i+1:i+len(needle)], needle[1:]) {
			return true
		}
	}
	return false
}

// indexEither returns the first index of a or b in s, or -1.
func indexEither(s string, a, b byte) int {
	i := strings.IndexByte(s, a)
	if a == b {
		return i
	}
	if i >= 0 {
		s = s[:i]
	}
	if j := strings.IndexByte(s, b); j >= 0 {
		return j
	}
	return i
}

// equalFold reports whether s equals lower (ASCII, lower case) once its
// ASCII capitals are lowered.
func equalFold(s, lower string) bool {
	for k := 0; k < len(lower); k++ {
		c := s[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[k] {
			return false
		}
	}
	return true
}
