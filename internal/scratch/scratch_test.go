package scratch

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScratchPID: only names Dir makes carry a process to check;
// an older name (random digits only) is never taken for one.
func TestScratchPID(t *testing.T) {
	for name, want := range map[string]int{
		"lro-extract-copies-pid123-456": 123,
		"lro-extract-copies-123456":     0,
		"lro-extract-copies-pid-456":    0,
		"lro-extract-copies-pid12x-456": 0,
		"lro-spool-pid123-456":          0, // another prefix
		"lro-extract-copies-pid0-1":     0,
	} {
		pid, ok := scratchPID(name, "lro-extract-copies-")
		assert.Equal(t, want, pid*map[bool]int{true: 1, false: 0}[ok], name)
	}
}
