package structq

import "strings"

// containsFold reports whether lower (lower-cased) occurs in s regardless
// of case, as strings.Contains(strings.ToLower(s), lower) does, without
// lower-casing s when both are ASCII (a title with capitals would
// allocate its copy for each record) and the naive search stays short.
func containsFold(s, lower string) bool {
	n := len(lower)
	if !isASCII(lower) || len(s)*n > 1<<20 || !isASCII(s) {
		return strings.Contains(strings.ToLower(s), lower)
	}
	if n == 0 {
		return true
	}
	// Candidates start with lower's first byte in either case, found
	// with IndexByte (vectorized); each case's next position is kept
	// until passed, so that s is scanned once for each.
	lo, up := lower[0], lower[0]
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	end := len(s) - n + 1
	next := func(b byte, from int, at *int) int {
		if *at == -2 || *at >= from {
			return *at
		}
		if k := strings.IndexByte(s[from:end], b); k >= 0 {
			*at = from + k
		} else {
			*at = -2 // none left
		}
		return *at
	}
	atLo, atUp := -1, -1
	for i := 0; i < end; i++ {
		k := next(lo, i, &atLo)
		if u := next(up, i, &atUp); u >= 0 && (k < 0 || u < k) {
			k = u
		}
		if k < 0 {
			return false
		}
		i = k
		j := 1
		for j < n && asciiLower(s[i+j]) == lower[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func asciiLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
