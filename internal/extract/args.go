package extract

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcplro/lro/internal/jqsandbox"
	"github.com/mcplro/lro/internal/recipes"
	"github.com/mcplro/lro/internal/records"
	"github.com/mcplro/lro/internal/structq"
	"github.com/mcplro/lro/internal/textlines"
)

// Bounds on the arguments of lro_extract, checked before anything is read
// or compiled: each argument comes from a model that may be
// prompt-injected, and the host SDK has already decoded it.
const (
	// maxPathBytes bounds file_path (PATH_MAX on Linux).
	maxPathBytes = 4096
	// maxParams bounds the number of params: gojq's compiler does work
	// quadratic in the number of variables.
	maxParams = 32
	// maxParamsBytes bounds the params of a query as JSON.
	maxParamsBytes = 64 << 10
	// maxRecipeParam bounds a recipe parameter. Recipes run without the
	// guards of custom queries, so their inputs are kept small.
	maxRecipeParam = 256
	// maxPatternCost bounds a recipe parameter used as a regular
	// expression (test($keyword; "i")), in compiled instructions (see
	// jqsandbox.PatternCost): a keyword needs a few dozen, while 256 bytes
	// of counted repetitions compile to tens of thousands, kept in the
	// compiled recipe's cache.
	maxPatternCost = 2048
	// maxEcho bounds what a message repeats of an argument.
	maxEcho = 200
	// maxErrorBytes bounds an error message, like results are bounded.
	maxErrorBytes = 2048
)

// extractCall is an lro_extract call, its arguments checked.
type extractCall struct {
	path   string
	recipe any // the recipe argument, nil for a query
	query  string
	params map[string]any
	slurp  bool
	// The text modes: grep (a pattern, with context lines and a case
	// flag) or lines (a range), instead of a recipe or a query.
	grep       string
	lines      string
	context    int
	ignoreCase bool
	// structured is a question asked without jq (where, select, sort,
	// limit, aggregate, group_by), instead of the modes above.
	structured *structq.Spec
}

// parseExtractCall checks the arguments of a call against their bounds.
func parseExtractCall(args map[string]any, maxQuery int) (extractCall, error) {
	var c extractCall
	c.path, _ = args["file_path"].(string)
	if c.path == "" {
		return c, fmt.Errorf("file_path is required: pass the file_path of an offload descriptor")
	}
	if len(c.path) > maxPathBytes {
		return c, fmt.Errorf("file_path is %d bytes long; the file_path of an offload descriptor is shorter", len(c.path))
	}
	if r, ok := args["recipe"]; ok && r != nil {
		c.recipe = r
	}
	c.query, _ = args["query"].(string)
	if q, present := args["query"]; present && q != nil && c.query == "" {
		return c, fmt.Errorf("query must be a non-empty string holding a jq filter")
	}
	if err := c.parseText(args); err != nil {
		return c, err
	}
	if structq.Present(args) {
		var err error
		if c.structured, err = structq.Parse(args); err != nil {
			return c, err
		}
	}
	modes := 0
	for _, set := range []bool{c.recipe != nil, c.query != "", c.grep != "", c.lines != "", c.structured != nil} {
		if set {
			modes++
		}
	}
	if modes != 1 {
		return c, fmt.Errorf("give exactly one of recipe (a number), query (a jq filter), grep (a pattern), lines (a range such as 100-200) and a question without jq (where, select, sort, limit, aggregate, group_by)")
	}
	if len(c.query) > maxQuery {
		return c, fmt.Errorf("invalid query: query too long: %d bytes (limit %d)", len(c.query), maxQuery)
	}
	c.params = map[string]any{}
	if p, present := args["params"]; present && p != nil {
		m, ok := p.(map[string]any)
		if !ok {
			return c, fmt.Errorf("params must be an object such as {\"namespace\": \"_semantic\"}")
		}
		if len(m) > maxParams {
			return c, fmt.Errorf("params has %d entries; at most %d", len(m), maxParams)
		}
		size := 0
		for k, v := range m {
			if !recipes.IsIdent(k) || len(k) > 64 {
				return c, fmt.Errorf("parameter name %s cannot be a jq variable: use up to 64 letters, digits and _", echo(strconv.Quote(k)))
			}
			n, ok := jsonSizeAtMost(v, maxParamsBytes-size)
			if !ok {
				return c, fmt.Errorf("params are larger than %d bytes as JSON", maxParamsBytes)
			}
			size += n
		}
		c.params = m
	}
	c.slurp, _ = args["slurp"].(bool)
	if c.structured != nil && (len(c.params) > 0 || c.slurp) {
		return c, fmt.Errorf("params and slurp go with recipe or query, not with where, aggregate and the other arguments of a question")
	}
	return c, nil
}

// jsonSizeAtMost returns about how many bytes v takes as JSON, or false
// as soon as that exceeds limit, without encoding it.
func jsonSizeAtMost(v any, limit int) (int, bool) {
	n := 0
	var walk func(any, int) bool
	walk = func(v any, depth int) bool {
		if depth > 100 {
			return false
		}
		switch x := v.(type) {
		case string:
			n += len(x) + 2
		case map[string]any:
			n += 2
			for k, e := range x {
				if n += len(k) + 4; n > limit || !walk(e, depth+1) {
					return false
				}
			}
		case []any:
			n += 2
			for _, e := range x {
				if n++; n > limit || !walk(e, depth+1) {
					return false
				}
			}
		default:
			n += 24
		}
		return n <= limit
	}
	return n, walk(v, 0)
}

// recipeNumber reads a recipe number from 1 to max, given as a JSON number
// (or, leniently, a string of digits).
func recipeNumber(v any, max int) (int, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return 0, false
		}
		f = float64(n)
	default:
		return 0, false
	}
	// Compare as floats: converting 1e19 to int first would overflow.
	if f != math.Trunc(f) || f < 1 || f > float64(max) {
		return 0, false
	}
	return int(f), true
}

// checkRecipeParam accepts a literal for a recipe parameter: a short
// string, a number or a boolean. asPattern marks a parameter the recipe
// uses as a regular expression: it must compile to a small program.
func checkRecipeParam(name string, v any, asPattern bool) (cost int, err error) {
	switch x := v.(type) {
	case string:
		if len(x) > maxRecipeParam {
			return 0, fmt.Errorf("parameter %q is %d bytes long; at most %d", name, len(x), maxRecipeParam)
		}
		if !asPattern {
			return 0, nil
		}
		cost = jqsandbox.PatternCost(x, "i")
		if cost > maxPatternCost {
			return 0, fmt.Errorf("parameter %q is a regular expression too large to compile (about %d instructions; at most %d): search for a word or a few alternatives", name, cost, maxPatternCost)
		}
		return cost, nil
	case float64, bool:
		return 0, nil
	}
	return 0, fmt.Errorf("parameter %q must be a string, got %s", name, echo(jsonText(v)))
}

// regexCallRE finds the jq builtins whose first argument is a regular
// expression.
var regexCallRE = regexp.MustCompile(`\b(?:test|match|capture|scan|splits|sub|gsub|split)\(\s*\$([A-Za-z_][A-Za-z0-9_]*)`)

// patternParams returns the names of the parameters filter uses as
// regular expressions. (split($x) with one argument splits on a plain
// string; counting it too only checks a little more.)
func patternParams(filter string) []string {
	var names []string
	for _, m := range regexCallRE.FindAllStringSubmatch(filter, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}

// echo clips s for a message that repeats it: a 1 MiB argument must not
// come back to the model fourfold.
func echo(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return records.ClipText(s, maxEcho) + fmt.Sprintf("...(%d bytes)", len(s))
}

// EchoQuoted quotes s for a message that repeats it, clipped as echo
// clips it: a quoted 100 KB argument must not come back whole.
func EchoQuoted(s string) string {
	if len(s) <= maxEcho {
		return strconv.Quote(s)
	}
	return strconv.Quote(records.ClipText(s, maxEcho)) + fmt.Sprintf("...(%d bytes)", len(s))
}

func paramList(ps []recipes.RecipeParam) string {
	if len(ps) == 0 {
		return "no parameters"
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return "the parameters " + strings.Join(names, ", ")
}

// parseText reads the arguments of the grep and lines modes.
func (c *extractCall) parseText(args map[string]any) error {
	for key, dst := range map[string]*string{"grep": &c.grep, "lines": &c.lines} {
		v, present := args[key]
		if !present || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok || s == "" {
			return fmt.Errorf("%s must be a non-empty string", key)
		}
		if len(s) > textlines.MaxPattern {
			return fmt.Errorf("%s is %d bytes long; at most %d", key, len(s), textlines.MaxPattern)
		}
		*dst = s
	}
	if v, present := args["context"]; present && v != nil {
		n, ok := v.(float64)
		if !ok || n != math.Trunc(n) || n < 0 || n > textlines.MaxContext {
			return fmt.Errorf("context must be a whole number of lines from 0 to %d, got %s", textlines.MaxContext, echo(jsonText(v)))
		}
		c.context = int(n)
	}
	c.ignoreCase, _ = args["ignore_case"].(bool)
	if (c.context > 0 || c.ignoreCase) && c.grep == "" {
		return fmt.Errorf("context and ignore_case go with grep")
	}
	return nil
}

// jsonText returns v as JSON, or as Go prints it when it is not JSON.
func jsonText(v any) string {
	b, err := records.MarshalText(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// EchoJSON returns v as JSON for an error message, cut like echo.
func EchoJSON(v any) string { return echo(jsonText(v)) }
