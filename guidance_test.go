package lro

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuidanceStatesTheFileLifetime: the guidance says when the file
// goes, so that a model coming back later knows to call the tool again;
// without a TTL it says nothing about it. The native guidance says it too
// (it left it to lro_extract's description, which a model does not always
// read); so does that description.
func TestGuidanceStatesTheFileLifetime(t *testing.T) {
	tt, err := loadTemplates(nil)
	require.NoError(t, err)
	for _, native := range []bool{false, true} {
		for _, memories := range []bool{false, true} {
			d := guidanceData{Count: 200, Tokens: 9000, Path: "/tmp/lro/f.jsonl", Detail: DetailFull, Memories: memories}
			assert.NotContains(t, tt.guidance(native, d), "kept", "native=%v memories=%v", native, memories)
			d.TTL = time.Hour
			assert.Contains(t, tt.guidance(native, d), "The file is kept about 1 hour; then call the tool again.", "native=%v memories=%v", native, memories)
		}
	}
	o, err := New(DefaultConfig())
	require.NoError(t, err)
	defer o.Close()
	desc := o.Host().ExtractToolDefinition().Description
	assert.Contains(t, desc, "deleted "+time.Hour.String())
	assert.Contains(t, desc, "call the original tool again")
}

// TestGuidanceSaysWhatTheFileHolds: both templates give the count and what
// is counted, the detail level of memories (the specification asks the
// guidance to note it) and never the path or the token count, which
// file_path and the summary carry. The shell guidance is advisory and says
// where the records start; the native one shows an lro_extract call.
func TestGuidanceSaysWhatTheFileHolds(t *testing.T) {
	tt, err := loadTemplates(nil)
	require.NoError(t, err)
	for _, c := range []struct {
		data guidanceData
		want string
	}{
		{guidanceData{Count: 200, Detail: DetailMedium, Memories: true}, "200 memories at medium detail"},
		{guidanceData{Count: 300}, "300 records"},
		{guidanceData{Count: 400, Lines: true}, `400 lines of text, as {"line", "text"} objects`},
		{guidanceData{Count: 300, Section: "edges", Sections: 1}, "The file holds the result's edges field; sections lists the other large field."},
		{guidanceData{Count: 300, Section: "edges", Sections: 2}, "sections lists the 2 other large fields."},
	} {
		c.data.Path, c.data.Tokens, c.data.TTL = "/tmp/lro/atlatl-recall-01KAQ7Z8M3V4W9X2Y5B6C7D8E9.jsonl", 35221, time.Hour
		for _, native := range []bool{false, true} {
			g := tt.guidance(native, c.data)
			assert.Contains(t, g, c.want, "native=%v", native)
			assert.NotContains(t, g, c.data.Path, "native=%v", native)
			assert.NotContains(t, g, "35221", "native=%v", native)
			if native {
				assert.Contains(t, g, "lro_extract(file_path=")
				assert.Contains(t, g, "or where=[{field,op,value}] (no jq)", "the question without jq")
			} else {
				assert.Contains(t, g, "Use the jq recipes above")
				assert.Contains(t, g, "line 1 is a header")
			}
			assert.Equal(t, g, strings.TrimSpace(g))
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
