package lro

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuidanceStatesTheFileLifetime: both guidance templates say when the
// file goes, so that a model coming back later knows to call the tool
// again; without a TTL they say nothing about it.
func TestGuidanceStatesTheFileLifetime(t *testing.T) {
	tt, err := loadTemplates(nil)
	require.NoError(t, err)
	for _, native := range []bool{false, true} {
		for _, memories := range []bool{false, true} {
			d := guidanceData{Count: 200, Tokens: 9000, Path: "/tmp/lro/f.jsonl", Detail: DetailFull, Memories: memories}
			assert.NotContains(t, tt.guidance(native, d), "deleted", "native=%v memories=%v", native, memories)
			d.TTL = time.Hour
			assert.Contains(t, tt.guidance(native, d), "The file is deleted about 1 hour after it was written; then call the tool again.",
				"native=%v memories=%v", native, memories)
		}
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour:                     "1 hour",
		90 * time.Minute:              "90 minutes",
		150 * time.Minute:             "2 hours 30 minutes",
		36 * time.Hour:                "36 hours",
		72*time.Hour + time.Hour:      "3 days 1 hour",
		45 * time.Second:              "45 seconds",
		time.Minute:                   "1 minute",
		10 * 365 * 24 * time.Hour:     "3650 days",
		2*time.Hour + 5*time.Second:   "2 hours 5 seconds",
		500 * time.Millisecond:        "500ms",
		24*time.Hour + 30*time.Minute: "24 hours 30 minutes",
	} {
		assert.Equal(t, want, humanDuration(d), "%v", d)
	}
}
