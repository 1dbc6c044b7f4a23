package jqsandbox

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// guardMatch guards _match($re; $flags; $test), which every regex builtin
// calls. With the "g" flag it materializes every match at once.
func guardMatch(st *runState, v any, args []any) any {
	re, _ := args[0].(string)
	flags, _ := args[1].(string)
	if len(re) > maxRegexBytes {
		return st.tooComplex("regular expression of %d bytes (limit %d)", len(re), maxRegexBytes)
	}
	key := [2]string{re, flags}
	compiled, seen := st.regexes[key]
	if !seen {
		if len(st.regexes) >= maxRegexes {
			return st.tooComplex("more than %d distinct regular expressions", maxRegexes)
		}
		// Compiling expands counted repetitions: "[a-z]{1000}" * 1000 is a
		// million instructions, hundreds of megabytes allocated at once.
		if err := st.need(regexSize(re)*sizeRegexInst, "compiling a regular expression"); err != nil {
			return err
		}
		st.regexes[key] = nil
	}
	s, ok := v.(string)
	if args[2] == true || !ok || !strings.ContainsRune(flags, 'g') {
		return v
	}
	// Up to two matches per position (gojq adds the empty match that
	// follows a non-empty one).
	if 2*float64(len(s)+1)*sizeMatch <= smallAlloc {
		return v
	}
	if compiled == nil {
		var err error
		if compiled, err = compileRegex(re, flags); err != nil {
			return v // gojq reports it
		}
		st.regexes[key] = compiled
	}
	per := float64(sizeMatch + sizeCapture*compiled.NumSubexp())
	limit := int(float64(st.lim.MaxHeapBytes)/(2*per)) + 1
	if 2*float64(len(s)+1)*per <= smallAlloc {
		return v
	}
	n := len(compiled.FindAllStringIndex(s, limit))
	return orErr(v, st.need(2*float64(n)*per, "regular expression match"))
}

// regexSize estimates the number of instructions of the compiled re (0 if
// it does not parse: gojq reports the error).
func regexSize(re string) float64 {
	r, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return 0
	}
	return regexSizeOf(r)
}

// regexSizeOf estimates the number of instructions of the compiled r.
func regexSizeOf(r *syntax.Regexp) float64 {
	var size func(*syntax.Regexp) float64
	size = func(r *syntax.Regexp) float64 {
		n := 1.0
		for _, s := range r.Sub {
			n += size(s)
		}
		switch r.Op {
		case syntax.OpLiteral:
			n += float64(len(r.Rune))
		case syntax.OpRepeat:
			count := r.Max
			if count < 0 {
				count = r.Min + 1
			}
			n *= float64(max(count, 1))
		}
		return n
	}
	return size(r)
}

// compileRegex compiles re as gojq does for the given flags.
func compileRegex(re, flags string) (*regexp.Regexp, error) {
	if strings.ContainsRune(flags, 'i') {
		re = "(?i)" + re
	}
	if strings.ContainsRune(flags, 'm') {
		re = "(?s)" + re
	}
	return regexp.Compile(re)
}
