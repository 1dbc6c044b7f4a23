package recipes

import "regexp"

// Count is the number of recipes in every descriptor, as the
// specification requires (lro.RecipeCount).
const Count = 10

// A Recipe is a jq program over the records of an offloaded file: see
// lro.Recipe.
type Recipe struct {
	Description string
	Filter      string
	Slurp       bool
	Raw         bool
	Params      []RecipeParam
}

// RecipeParam is a variable of a Recipe: see lro.RecipeParam.
type RecipeParam struct {
	Name    string
	Default string
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// IsIdent reports whether s can name a jq variable.
func IsIdent(s string) bool { return identRE.MatchString(s) }

func isIdent(s string) bool { return IsIdent(s) }
