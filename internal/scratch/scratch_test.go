package scratch

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScratchName: only names Dir makes carry a process to check; an
// older name (random digits only) is never taken for one, and only the
// names of this version have a lock.
func TestScratchName(t *testing.T) {
	type want struct {
		pid    int
		locked bool
		ok     bool
	}
	for name, w := range map[string]want{
		"lro-extract-copies-pid123-456":    {123, false, true},
		"lro-extract-copies-pid123-lk456":  {123, true, true},
		"lro-extract-copies-123456":        {},
		"lro-extract-copies-pid-456":       {},
		"lro-extract-copies-pid12x-456":    {},
		"lro-spool-pid123-456":             {}, // another prefix
		"lro-extract-copies-pid0-1":        {},
		"lro-extract-copies-pid0-lk1":      {},
		"lro-extract-copies-pid7lk-lk1234": {},
	} {
		pid, locked, ok := scratchName(name, "lro-extract-copies-")
		if !ok {
			pid, locked = 0, false
		}
		assert.Equal(t, w, want{pid, locked, ok}, name)
	}
}
