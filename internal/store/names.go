package store

import (
	"fmt"
	"strings"

	"github.com/oklog/ulid/v2"
)

// FileName returns {prefix}-{operation}-{ULID}.jsonl.
func FileName(prefix, operation string, id ulid.ULID) string {
	return prefix + "-" + operation + "-" + id.String() + ".jsonl"
}

// TempName is where a file is written before it is published. The leading
// dot and the suffix keep it out of the pattern that readers and recipes
// look for, so nobody can see a file that is still being written.
func TempName(final string) string { return "." + final + ".tmp" }

// ParseFileName reports whether name is a published or temporary file of
// this prefix, and the ULID in it.
func ParseFileName(prefix, name string) (op string, id ulid.ULID, temp, ok bool) {
	if rest, found := strings.CutPrefix(name, "."); found {
		if rest, found = strings.CutSuffix(rest, ".tmp"); !found {
			return "", id, false, false
		}
		name, temp = rest, true
	}
	rest, found := strings.CutPrefix(name, prefix+"-")
	if !found {
		return "", id, false, false
	}
	rest, found = strings.CutSuffix(rest, ".jsonl")
	if !found || len(rest) < ulid.EncodedSize+2 || rest[len(rest)-ulid.EncodedSize-1] != '-' {
		return "", id, false, false
	}
	op = rest[:len(rest)-ulid.EncodedSize-1]
	id, err := ulid.ParseStrict(rest[len(rest)-ulid.EncodedSize:])
	if err != nil || CheckName(op) != nil {
		return "", id, false, false
	}
	return op, id, temp, true
}

// CheckName refuses a name that cannot be part of a file name (an
// operation, a prefix): it must be 1 to 64 letters, digits or '_'.
func CheckName(s string) error {
	if s == "" {
		return fmt.Errorf("must not be empty")
	}
	if len(s) > 64 {
		return fmt.Errorf("must be at most 64 characters")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return fmt.Errorf("may hold only letters, digits and '_'")
		}
	}
	return nil
}
