package tmpl

import (
	"errors"
	"fmt"
	"time"
)

// Fields is the data a template runs over: named values, each a bool, an
// int, a time.Duration, a float64, a string or nested Fields. A template
// reads them as .Name (and .Name.Inner); a name not in the map is an
// error, as text/template's missingkey=error makes it.
type Fields map[string]any

// kind is the kind of a value, as text/template's comparisons see it.
type kind int

const (
	otherKind kind = iota // not comparable by eq and lt (Fields)
	boolKind
	intKind
	floatKind
	stringKind
)

// kindOf returns v's kind, or an error if v is of a type templates cannot
// use.
func kindOf(v any) (kind, error) {
	switch v.(type) {
	case bool:
		return boolKind, nil
	case int, time.Duration:
		return intKind, nil
	case float64:
		return floatKind, nil
	case string:
		return stringKind, nil
	case Fields:
		return otherKind, nil
	}
	return otherKind, fmt.Errorf("a value of type %T, which templates cannot use", v)
}

// asInt returns an integer value as an int64.
func asInt(v any) int64 {
	if d, ok := v.(time.Duration); ok {
		return int64(d)
	}
	return int64(v.(int))
}

// truth is text/template's truth of a value: false for false, 0, "" and
// empty Fields.
func truth(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case int:
		return v != 0
	case time.Duration:
		return v != 0
	case float64:
		return v != 0
	case string:
		return v != ""
	case Fields:
		return len(v) > 0
	}
	return false
}

var (
	errBadComparisonType = errors.New("invalid type for comparison")
	errNoComparison      = errors.New("missing argument for comparison")
)

// incompatible is the error for comparing values of different kinds.
func incompatible(a, b any) error {
	return fmt.Errorf("incompatible types for comparison: %T and %T", a, b)
}

// eq is true when a equals any of bs, as text/template's eq.
func eq(a any, bs ...any) (bool, error) {
	if len(bs) == 0 {
		return false, errNoComparison
	}
	ka, _ := kindOf(a)
	for _, b := range bs {
		kb, _ := kindOf(b)
		if ka != kb {
			return false, incompatible(a, b)
		}
		var equal bool
		switch ka {
		case boolKind:
			equal = a.(bool) == b.(bool)
		case intKind:
			equal = asInt(a) == asInt(b)
		case floatKind:
			equal = a.(float64) == b.(float64)
		case stringKind:
			equal = a.(string) == b.(string)
		default:
			return false, fmt.Errorf("non-comparable types %T and %T", a, b)
		}
		if equal {
			return true, nil
		}
	}
	return false, nil
}

// lt is a < b, as text/template's lt.
func lt(a, b any) (bool, error) {
	ka, err := kindOf(a)
	if err == nil && ka == otherKind {
		err = errBadComparisonType
	}
	if err != nil {
		return false, err
	}
	kb, err := kindOf(b)
	if err == nil && kb == otherKind {
		err = errBadComparisonType
	}
	if err != nil {
		return false, err
	}
	if ka != kb {
		return false, incompatible(a, b)
	}
	switch ka {
	case intKind:
		return asInt(a) < asInt(b), nil
	case floatKind:
		return a.(float64) < b.(float64), nil
	case stringKind:
		return a.(string) < b.(string), nil
	}
	return false, errBadComparisonType
}

// length is text/template's len, of a string or Fields.
func length(v any) (int, error) {
	switch v := v.(type) {
	case string:
		return len(v), nil
	case Fields:
		return len(v), nil
	}
	return 0, fmt.Errorf("len of type %T", v)
}
