// Package setting holds the one rule by which every number of the
// module's configurations (lro's options and Config, the proxy's Config)
// is resolved, so that zero and negative mean the same everywhere.
package setting

// Resolve applies the rule to n: zero is def, the default; negative is
// none, written 0; anything else is n.
func Resolve[T ~int | ~int64](n, def T) T {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}
