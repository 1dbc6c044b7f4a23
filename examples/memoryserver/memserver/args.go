package memserver

import (
	"encoding/json"
	"fmt"
	"math"
)

// detailOf validates the detail argument; the offload middleware checks it
// too, but the tool must stand on its own without it.
func detailOf(args map[string]any, def string) (string, error) {
	v, ok := args["detail"]
	if !ok {
		return def, nil
	}
	s, _ := v.(string)
	switch s {
	case "light", "medium", "full":
		return s, nil
	}
	b, _ := json.Marshal(v)
	return "", fmt.Errorf("invalid detail %s: want \"light\", \"medium\" or \"full\"", b)
}

// stringArg reads a string argument, refusing what is not one.
func stringArg(args map[string]any, key string, required bool) (string, error) {
	v, ok := args[key]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("required argument %q not found", key)
		}
		return "", nil
	}
	s, isString := v.(string)
	if !isString {
		b, _ := json.Marshal(v)
		return "", fmt.Errorf("invalid %s %s: want a string", key, b)
	}
	return s, nil
}

// intArg reads a whole-number argument, refusing what is not one.
func intArg(args map[string]any, key string, def, lo, hi int) (int, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return def, nil
	}
	f, isNum := v.(float64)
	if !isNum || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		b, _ := json.Marshal(v)
		return 0, fmt.Errorf("invalid %s %s: want a whole number from %d to %d", key, b, lo, hi)
	}
	return int(f), nil
}

func round(f float64) float64 { return math.Round(f*1000) / 1000 }
