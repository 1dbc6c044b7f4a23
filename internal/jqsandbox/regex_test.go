package jqsandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// regexInputs are the records of the regex tests: strings that match in
// ASCII, in other cases, through the Kelvin sign and the long s (which
// fold to k and s), and values that are not strings.
var regexInputs = []any{
	"Quasar light", "no match here", "QUASAR", "qUaSaR-x", "kelvin \u212a and long \u017f", "Kelvin KS ks",
	"\u212aelvin", "word boundary: a quasar.", "", "é café ÉCOLE", "line1\nline2", "x", "aaa", 42.0, nil,
	[]any{"quasar"}, map[string]any{"a": "quasar"},
}

// regexPatterns and regexFlags are combined with every input.
var (
	regexPatterns = []any{"quasar", "QUASAR", "qu.sar", "(qu)asar", "k", "s", "kelvin", "\u212a", "\u017f",
		"ks", "[", "a{2,", "", "x*", "\\bquasar\\b", "^quasar$", "quasar|nova", "é", "(?i)école", "line1.line2",
		"(?<w>[a-z]+)", "\ufffd", "a+", 7.0, nil}
	regexFlags = []any{nil, "i", "x", "g", "gi", "m", "im", "ix", "n", "", 1.0}
)

// regexForms are the regex builtins, each wrapped in try so that errors
// are compared too (as the message catch gives).
var regexForms = []string{
	`test($re; $flags)`,
	`test($re)`,
	`[match($re; $flags)]`,
	`[match($re; $flags) | .offset]`,
	`[capture($re; $flags)]`,
	`[scan($re; $flags)]`,
	`sub($re; "<\(.)>"; $flags)`,
	`[splits($re; $flags)]`,
}

// TestRegexMatchesGojq runs the regex builtins in the sandbox (guarded and
// trusted, which answer test from kept expressions and inline test calls)
// and in plain gojq, which the sandbox answered through before: the same
// results and the same errors, for every pattern, flag and input. By
// default each pattern and flags run with a quarter of the forms, every
// form in turn; LRO_TEST_FULL runs them all.
func TestRegexMatchesGojq(t *testing.T) {
	var lines strings.Builder
	for _, in := range regexInputs {
		b, err := json.Marshal(in)
		require.NoError(t, err)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	for i, form := range regexForms {
		// Compiled once, run with each pattern and flags.
		query := `try (` + form + `) catch ("error: " + tostring)`
		plain := gojqCode(t, query, "$re", "$flags")
		names := []string{"re", "flags"}
		sandbox := map[bool]*Query{false: compileFor(t, query, names, false), true: compileFor(t, query, names, true)}
		k := 0
		for _, re := range regexPatterns {
			for _, flags := range regexFlags {
				if k++; (i+k)%4 != 0 && !testenv.Full() {
					continue
				}
				want := plainGojq(t, plain, re, flags)
				for trusted, q := range sandbox {
					res, err := q.Run(context.Background(), strings.NewReader(lines.String()), Stream, []any{re, flags}, testLimits())
					require.NoError(t, err, query)
					require.Equal(t, want, decodeResults(t, res.Values), "%s with $re=%#v $flags=%#v (trusted %v)", form, re, flags, trusted)
				}
			}
		}
	}
}

// TestRegexLiteralsMatchGojq: test calls with literal arguments are
// inlined (rewriter.inlineTest); they answer as gojq, errors included,
// also when not caught.
func TestRegexLiteralsMatchGojq(t *testing.T) {
	k := 0 // by default, each pattern and flags run on a quarter of the inputs, every input in turn
	for _, re := range regexPatterns {
		for _, flags := range regexFlags {
			k++
			reText, _ := json.Marshal(re)
			flagsText, _ := json.Marshal(flags)
			for _, query := range []string{
				fmt.Sprintf(`test(%s; %s)`, reText, flagsText),
				fmt.Sprintf(`test(%s)`, reText),
				fmt.Sprintf(`select(test(%s; %s)) | length`, reText, flagsText),
			} {
				plain := gojqCode(t, query)
				sandbox := map[bool]*Query{false: compileFor(t, query, nil, false), true: compileFor(t, query, nil, true)}
				for i, in := range regexInputs {
					if (i+k)%4 != 0 && !testenv.Full() {
						continue
					}
					want, wantErr := plainGojqOne(t, plain, in)
					b, err := json.Marshal(in)
					require.NoError(t, err)
					for trusted, q := range sandbox {
						res, err := q.Run(context.Background(), strings.NewReader(string(b)), Stream, nil, testLimits())
						if wantErr != "" {
							var qe *QueryError
							require.ErrorAs(t, err, &qe, "%s on %s", query, b)
							assert.Equal(t, wantErr, qe.Message, "%s on %s (trusted %v)", query, b, trusted)
							continue
						}
						require.NoError(t, err, "%s on %s", query, b)
						assert.Equal(t, want, decodeResults(t, res.Values), "%s on %s (trusted %v)", query, b, trusted)
					}
				}
			}
		}
	}
}

// TestInlineTestRespectsDefinitions: a test the query defines is its own.
func TestInlineTestRespectsDefinitions(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		q := compileFor(t, `def test($a; $b): "mine"; test("x"; "i")`, nil, trusted)
		res, err := q.Run(context.Background(), strings.NewReader(`"x"`), Stream, nil, testLimits())
		require.NoError(t, err)
		assert.Equal(t, []string{`"mine"`}, strs(res.Values))
	}
}

// TestRegexCacheBounds: the kept expressions are bounded in number, in
// the patterns' size, and in what one run adds.
func TestRegexCacheBounds(t *testing.T) {
	q, err := Compile(`[range(200) | tostring as $p | "x" | test($p)] | length`, nil, testLimits())
	require.NoError(t, err)
	res, err := q.Run(context.Background(), strings.NewReader(`1`), Stream, nil, testLimits())
	require.NoError(t, err)
	assert.Equal(t, []string{"200"}, strs(res.Values), "answered, by gojq past the run's budget")
	regexCache.Lock()
	n := len(regexCache.byKey)
	regexCache.Unlock()
	assert.LessOrEqual(t, n, maxFastRegexes)

	st := &runState{}
	for i := range maxFastRegexNew + 5 {
		r := lookupRegex(st, fmt.Sprintf("bound%d", i), "")
		if i < maxFastRegexNew {
			require.NotNil(t, r)
		} else {
			require.Nil(t, r, "past the run's budget")
		}
	}
	big := strings.Repeat("a", maxFastRegexBytes+1)
	assert.Nil(t, fastMatch(&runState{}, "a", []any{big, nil, true}), "too long to keep: gojq's")
	r := lookupRegex(&runState{}, "[a-z]{1000}[0-9]{1000}", "")
	require.NotNil(t, r)
	assert.Nil(t, r.re, "too large to keep")
}

// TestRequiredText: the needle every match contains.
func TestRequiredText(t *testing.T) {
	for _, tc := range []struct {
		re, needle string
		fold       bool
	}{
		{"quasar", "quasar", false},
		{"(?i)quasar", "qua", true}, // s folds to the long s
		{"(?i)timeout", "timeout", true},
		{"(?i)kelvin", "elvin", true},
		{"error: \\d+ timeout", " timeout", false},
		{"(?i)(foo)bar", "foo", true},
		{"a|b", "", false},
		{"caf\u00e9s", "caf", false},
		{"x*", "", false},
		{"", "", false},
	} {
		needle, fold := requiredText(mustParse(t, tc.re))
		assert.Equal(t, tc.needle, needle, tc.re)
		assert.Equal(t, tc.fold, fold, tc.re)
	}
}

// FuzzFastMatch: whatever the pattern, flags and string, _sbx_match
// answers as gojq's _match, and a string the needle rules out does not
// match.
func FuzzFastMatch(f *testing.F) {
	for _, s := range []string{"Quasar", "\u212aelvin", "long \u017f", "\xff\xfe", "a\nb"} {
		for _, re := range []string{"quasar", "(?i)k", "s", "\ufffd", "[", "b$", "(?i)LONG S"} {
			for _, flags := range []string{"", "i", "g", "x", "im"} {
				f.Add(s, re, flags, true)
			}
		}
	}
	f.Fuzz(func(t *testing.T, s, re, flags string, test bool) {
		if len(s) > 1<<10 || len(re) > 64 {
			return
		}
		args := []any{re, flags, test}
		fb := &matchFallback{}
		got := fastMatch(&runState{}, s, args)
		if got == nil {
			got = fb.call(s, args)
		}
		want := fb.call(s, args)
		if err, ok := want.(error); ok {
			gotErr, ok := got.(error)
			require.True(t, ok, "%q %q %q: want error %v, got %v", s, re, flags, err, got)
			require.Equal(t, err.Error(), gotErr.Error())
			return
		}
		require.Equal(t, want, got, "%q %q %q", s, re, flags)
	})
}

func mustParse(t *testing.T, re string) *syntax.Regexp {
	t.Helper()
	parsed, err := syntax.Parse(re, syntax.Perl)
	require.NoError(t, err)
	return parsed
}

// gojqCode compiles query in plain gojq, with the variables named.
func gojqCode(t *testing.T, query string, variables ...string) *gojq.Code {
	t.Helper()
	parsed, err := gojq.Parse(query)
	require.NoError(t, err)
	code, err := gojq.Compile(parsed, gojq.WithVariables(variables))
	require.NoError(t, err, query)
	return code
}

// plainGojq runs code, of $re and $flags, in plain gojq on each of
// regexInputs.
func plainGojq(t *testing.T, code *gojq.Code, re, flags any) []any {
	t.Helper()
	out := []any{}
	for _, in := range regexInputs {
		iter := code.Run(in, re, flags)
		for {
			v, ok := iter.Next()
			if !ok {
				break
			}
			_, isErr := v.(error)
			require.False(t, isErr, "%v", v)
			out = append(out, normalizeJSON(t, v))
		}
	}
	return out
}

// plainGojqOne runs code in plain gojq on in: its outputs, or the
// message of the error it stops with.
func plainGojqOne(t *testing.T, code *gojq.Code, in any) ([]any, string) {
	t.Helper()
	out := []any{}
	iter := code.Run(in)
	for {
		v, ok := iter.Next()
		if !ok {
			return out, ""
		}
		if err, ok := v.(error); ok {
			return nil, err.Error()
		}
		out = append(out, normalizeJSON(t, v))
	}
}

func compileFor(t *testing.T, query string, names []string, trusted bool) *Query {
	t.Helper()
	if trusted {
		q, err := CompileTrusted(query, names)
		require.NoError(t, err, query)
		return q
	}
	q, err := Compile(query, names, testLimits())
	require.NoError(t, err, query)
	return q
}

// normalizeJSON returns v as its JSON text decodes.
func normalizeJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := gojq.Marshal(v)
	require.NoError(t, err)
	var x any
	require.NoError(t, json.Unmarshal(b, &x))
	return x
}
