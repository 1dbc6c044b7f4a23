package lro

import "testing"

// TestShownDescription (issue 39.8): a descriptor's description spells a
// parameter as the command does, in capitals; a field's odd name, quoted,
// and a word that only starts like a parameter stay as they are.
func TestShownDescription(t *testing.T) {
	kw := []RecipeParam{{Name: "keyword", Default: "KEYWORD"}}
	for _, c := range []struct {
		r    Recipe
		want string
	}{
		{Recipe{Description: "Search title for $keyword", Params: kw}, "Search title for KEYWORD"},
		{Recipe{Description: `Search "$keyword" for $keyword`, Params: kw}, `Search "$keyword" for KEYWORD`},
		{Recipe{Description: `Search "a\"$keyword" for $keywords`, Params: kw}, `Search "a\"$keyword" for $keywords`},
		{Recipe{Description: "Show records $from to $to", Params: []RecipeParam{{"from", "11"}, {"to", "20"}}}, "Show records FROM to TO"},
		{Recipe{Description: "Costs $5"}, "Costs $5"},
	} {
		if got := c.r.shownDescription(); got != c.want {
			t.Errorf("%q: got %q, want %q", c.r.Description, got, c.want)
		}
	}
}
