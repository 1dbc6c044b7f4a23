package setting

import "testing"

func TestResolve(t *testing.T) {
	for _, c := range []struct{ n, def, want int64 }{
		{0, 5, 5},
		{-1, 5, 0},
		{7, 5, 7},
		{0, 0, 0},
	} {
		if got := Resolve(c.n, c.def); got != c.want {
			t.Errorf("Resolve(%d, %d) = %d, want %d", c.n, c.def, got, c.want)
		}
	}
}
