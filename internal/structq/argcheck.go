package structq

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The checks each argument's parts share, and the messages they give.

// field checks a dotted path: up to maxPathSteps non-empty keys.
func field(name string, v any) (string, error) {
	f, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string, a dotted field path such as \"trace.parent\", got %s", name, echo(v))
	}
	if f == "" || len(f) > maxPathBytes || strings.Count(f, ".") >= maxPathSteps || slices.Contains(strings.Split(f, "."), "") {
		return "", fmt.Errorf("%s must be a dotted field path such as \"trace.parent\" (at most %d keys, %d bytes, none empty), got %s", name, maxPathSteps, maxPathBytes, echo(v))
	}
	return f, nil
}

// only rejects keys of an argument's object other than allowed.
func only(name string, m map[string]any, allowed ...string) error {
	for k := range m {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("%s has no key %s; its keys are %s", name, strconv.Quote(clip(k)), strings.Join(allowed, ", "))
		}
	}
	return nil
}

// whole reads a whole number given as JSON.
func whole(v any) (int, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		return x, true
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > maxLimit*10 {
		return 0, false
	}
	return int(f), true
}

// maxEcho bounds what a message repeats of an argument.
const maxEcho = 200

// echo renders v, clipped, for a message.
func echo(v any) string { return clip(echoJSON(v)) }

// echoJSON renders v (a value decoded from JSON) as JSON.
func echoJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%T", v)
	}
	return string(b)
}

func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	n := maxEcho
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + fmt.Sprintf("...(%d bytes)", len(s))
}
