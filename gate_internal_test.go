package lro

import (
	"math"
	"testing"

	"github.com/mcplro/lro/internal/records"
)

// The gate's notice with the marker fits NoticeTokens with the largest
// numbers it can state.
func TestGateNoticeIsBounded(t *testing.T) {
	n := gateNotice(math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt, true, true) + records.CutMarker
	if got := (HeuristicEstimator{}).EstimateTokens([]byte(n)); got > NoticeTokens {
		t.Fatalf("the notice takes %d tokens, over NoticeTokens (%d): %s", got, NoticeTokens, n)
	}
}

// The note of a _meta left out fits NoticeTokens with the largest numbers.
func TestMetaNoteFitsNoticeTokens(t *testing.T) {
	n := metaNote(math.MaxInt, math.MaxInt)
	if got := (HeuristicEstimator{}).EstimateTokens([]byte(n)); got > NoticeTokens {
		t.Fatalf("the note takes %d tokens, over NoticeTokens (%d): %s", got, NoticeTokens, n)
	}
}
