package structq

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// decimalSum adds numbers exactly: in an int64 scaled by a power of ten
// while the values are short decimals (12 digits of a price), in a
// big.Rat beyond. Its sum prints with as many decimals as the most precise
// value added, never a float's 51735.99999999993.
type decimalSum struct {
	n        int      // values added
	small    int64    // the sum times 10^scale, while r is nil
	scale    int      // decimals of small
	r        *big.Rat // the sum, once it no longer fits small
	decimals int      // the most decimals of a value added
}

// maxDecimals bounds the decimals a sum prints: a value such as 1e-300
// has more than any price, and its sum prints as a float instead.
const maxDecimals = 40

func (s *decimalSum) add(n number) {
	s.n++
	text := n.decimalText()
	if m, sc, ok := shortDecimal(text); ok && s.r == nil {
		s.decimals = max(s.decimals, sc)
		if sum, ok := s.addSmall(m, sc); ok {
			s.small, s.scale = sum, max(s.scale, sc)
			return
		}
	}
	x := n.rat()
	s.decimals = max(s.decimals, decimalsOf(x))
	if s.r == nil {
		s.r = s.smallRat()
	}
	s.r.Add(s.r, x)
}

// addSmall returns small + m/10^sc at the larger of the two scales, or
// false on overflow.
func (s *decimalSum) addSmall(m int64, sc int) (int64, bool) {
	a, b := s.small, m
	var ok bool
	if sc > s.scale {
		if a, ok = scaleUp(a, sc-s.scale); !ok {
			return 0, false
		}
	} else if b, ok = scaleUp(b, s.scale-sc); !ok {
		return 0, false
	}
	sum := a + b
	if (a > 0 && b > 0 && sum < 0) || (a < 0 && b < 0 && sum >= 0) {
		return 0, false
	}
	return sum, true
}

// scaleUp returns x*10^k, or false on overflow.
func scaleUp(x int64, k int) (int64, bool) {
	for range k {
		if x > (1<<63-1)/10 || x < -(1<<63)/10 {
			return 0, false
		}
		x *= 10
	}
	return x, true
}

func (s *decimalSum) smallRat() *big.Rat {
	return new(big.Rat).SetFrac(big.NewInt(s.small), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s.scale)), nil))
}

func (s *decimalSum) exact() *big.Rat {
	if s.r != nil {
		return s.r
	}
	return s.smallRat()
}

// value is the sum, as a JSON number with the decimals of the most precise
// value added, or null when none was.
func (s *decimalSum) value() any {
	switch {
	case s.n == 0:
		return nil
	case s.r == nil:
		return json.Number(formatScaled(s.small, s.scale))
	case s.decimals <= maxDecimals:
		return json.Number(s.r.FloatString(s.decimals))
	}
	f, _ := s.r.Float64()
	return f
}

// avg is the mean of the values added, the float nearest the exact mean,
// or null when none was.
func (s *decimalSum) avg() any {
	if s.n == 0 {
		return nil
	}
	f, _ := new(big.Rat).Quo(s.exact(), big.NewRat(int64(s.n), 1)).Float64()
	return f
}

// shortDecimal reads -?digits(.digits)? of at most 18 digits as a
// mantissa and a scale.
func shortDecimal(s string) (int64, int, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(whole)+len(frac) > 18 || strings.ContainsAny(s, "eE") {
		return 0, 0, false
	}
	m, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if neg {
		m = -m
	}
	return m, len(frac), true
}

// formatScaled prints m/10^scale with scale decimals.
func formatScaled(m int64, scale int) string {
	neg := m < 0
	digits := strconv.FormatUint(absU(m), 10)
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

func absU(m int64) uint64 {
	if m < 0 {
		return uint64(-(m + 1)) + 1
	}
	return uint64(m)
}

// decimalsOf returns how many decimals print r exactly (its denominator
// divides 10^d), or maxDecimals+1 when more are needed or it has none.
func decimalsOf(r *big.Rat) int {
	d := new(big.Int).Set(r.Denom())
	ten, rem := big.NewInt(10), new(big.Int)
	for k := 0; k <= maxDecimals; k++ {
		if d.Cmp(big.NewInt(1)) == 0 {
			return k
		}
		// Multiply the remaining denominator out by 10: what is left of
		// 2^a5^b after k steps divides 10^(max(a,b)-k).
		g := new(big.Int).GCD(nil, nil, d, ten)
		d.QuoRem(d, g, rem)
	}
	return maxDecimals + 1
}
