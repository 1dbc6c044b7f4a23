package structq

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// number is a value read as a number: a JSON number, or a string that
// reads as one. f orders most pairs; text, the decimal text, decides
// exactly between those whose floats are equal (long integers, ids).
type number struct {
	f    float64
	text string
}

// maxNumberText bounds a string read as a number: longer digit strings
// (hashes, ids of 100 digits) stay strings.
const maxNumberText = 64

// toNumber reads v as a number (by value: it is read for each record,
// and must not allocate).
func toNumber(v any) (number, bool) {
	switch x := v.(type) {
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return number{}, false
		}
		return number{f: x}, true
	case int:
		return number{f: float64(x), text: strconv.Itoa(x)}, true
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return number{f: f, text: x.String()}, true
	case json.Number:
		return numberText(string(x))
	case string:
		return numberText(x)
	}
	return number{}, false
}

// numberText reads s as a number when it is one as JSON writes it
// (leading zeros allowed: "007").
func numberText(s string) (number, bool) {
	if !isDecimal(s) {
		return number{}, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return number{}, false
	}
	return number{f: f, text: s}, true
}

// asNumber is toNumber for a condition's value, kept: nil when it is not
// a number.
func asNumber(v any) *number {
	if n, ok := toNumber(v); ok {
		return &n
	}
	return nil
}

// isDecimal reports whether s is -?digits(.digits)?([eE][+-]?digits)?,
// at most maxNumberText bytes.
func isDecimal(s string) bool {
	if len(s) == 0 || len(s) > maxNumberText {
		return false
	}
	i := 0
	if s[0] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if !digits() {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// decimalText is the number's text, exact for the input: a float's
// shortest representation is the number it was written as.
func (n number) decimalText() string {
	if n.text == "" {
		return strconv.FormatFloat(n.f, 'g', -1, 64)
	}
	return n.text
}

// rat returns the number exactly.
func (n number) rat() *big.Rat {
	r, ok := new(big.Rat).SetString(n.decimalText())
	if !ok {
		r = new(big.Rat)
		r.SetFloat64(n.f)
	}
	return r
}

// cmpNumbers orders two numbers exactly.
func cmpNumbers(a, b number) int {
	switch {
	case a.f < b.f:
		return -1
	case a.f > b.f:
		return 1
	case a.decimalText() == b.decimalText():
		return 0
	}
	return a.rat().Cmp(b.rat())
}

// equal reports whether a field's value v equals the value x of a
// condition (xn: x as a number): as numbers when both are, else as JSON.
func equal(v any, x any, xn *number) bool {
	if xn != nil {
		if vn, ok := toNumber(v); ok {
			return cmpNumbers(vn, *xn) == 0
		}
	}
	switch y := x.(type) {
	case string:
		s, ok := v.(string)
		return ok && s == y
	case bool:
		b, ok := v.(bool)
		return ok && b == y
	case nil:
		return v == nil
	}
	return false // a number x and a value that is not one
}

// order compares a field's value v with x as lt, le, gt and ge do: as
// numbers when x is one (or reads as one) and so does v, as strings
// (bytewise) when both are strings that are not numbers; ok is false
// otherwise (no order between them: the condition fails), so that
// "amount gt 999" never holds of "N/A".
func order(v any, x any, xn *number) (c int, ok bool) {
	if xn != nil {
		if vn, ok := toNumber(v); ok {
			return cmpNumbers(vn, *xn), true
		}
		return 0, false
	}
	s, ok1 := v.(string)
	t, ok2 := x.(string)
	if !ok1 || !ok2 {
		return 0, false
	}
	switch {
	case s < t:
		return -1, true
	case s > t:
		return 1, true
	}
	return 0, true
}

// rank is a value's place in the order of sort, min and max: null,
// booleans, numbers (and strings that read as numbers), strings, arrays,
// objects.
func rank(v any) int {
	switch x := v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case string:
		if isDecimal(x) {
			return 2
		}
		return 3
	case []any:
		return 4
	case map[string]any:
		return 5
	}
	if _, ok := toNumber(v); ok {
		return 2
	}
	return 0
}

// compare orders any two values, as sort does: by rank, then numbers
// exactly, strings bytewise, false before true, and arrays and objects by
// their JSON text.
func compare(a, b any) int { return keyOf(a).cmp(keyOf(b)) }

// sortKey is a value read once for the comparisons of a sort.
type sortKey struct {
	rank int
	num  number // rank 2
	v    any
}

func keyOf(v any) sortKey {
	k := sortKey{rank: rank(v), v: v}
	if k.rank == 2 {
		k.num, _ = toNumber(v)
	}
	return k
}

func (a sortKey) cmp(b sortKey) int {
	if a.rank != b.rank {
		return a.rank - b.rank
	}
	switch a.rank {
	case 1:
		x, y := a.v.(bool), b.v.(bool)
		switch {
		case x == y:
			return 0
		case y:
			return -1
		}
		return 1
	case 2:
		return cmpNumbers(a.num, b.num)
	case 3:
		return strings.Compare(a.v.(string), b.v.(string))
	case 4, 5:
		return bytes.Compare(jsonText(a.v), jsonText(b.v))
	}
	return 0
}

// jsonText encodes v (a decoded JSON value) for comparison and counting.
func jsonText(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
