package adapt

import (
	"slices"
	"testing"
)

func TestReplacedCopiesOnlyWhenSomethingChanges(t *testing.T) {
	double := func(n int) (int, bool) {
		if n%2 == 0 {
			return n * 10, true
		}
		return n, false
	}
	tools := []int{1, 2, 3, 4}
	got := Replaced(tools, double)
	if want := []int{1, 20, 3, 40}; !slices.Equal(got, want) {
		t.Fatalf("Replaced = %v, want %v", got, want)
	}
	if !slices.Equal(tools, []int{1, 2, 3, 4}) {
		t.Fatalf("the server's own slice changed: %v", tools)
	}
	odd := []int{1, 3, 5}
	if got := Replaced(odd, double); &got[0] != &odd[0] {
		t.Fatalf("nothing changed, yet the slice was copied")
	}
	if got := Replaced[int](nil, double); got != nil {
		t.Fatalf("Replaced(nil) = %v, want nil", got)
	}
}
