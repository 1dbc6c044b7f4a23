package testenv

import (
	"testing"
	"time"
)

// TestWithinAssertsOnlyWhenTiming: a bound in time fails a test only
// with LRO_TEST_TIMING=1.
func TestWithinAssertsOnlyWhenTiming(t *testing.T) {
	t.Setenv("LRO_TEST_TIMING", "")
	if !Within(t, time.Hour, time.Second, "an hour") {
		t.Error("a bound asserted by default")
	}
	t.Setenv("LRO_TEST_TIMING", "1")
	if !Within(t, time.Millisecond, time.Second, "a millisecond") {
		t.Error("a bound met failed")
	}
}

// TestJQSkipsWithoutIt: without jq on PATH, a test that needs it skips.
func TestJQSkipsWithoutIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	ran := t.Run("needs jq", func(t *testing.T) {
		JQ(t)
		t.Error("ran without jq")
	})
	if !ran {
		t.Error("skipped is not failed")
	}
}

// TestParallelNotWhenTiming: with LRO_TEST_TIMING=1 a test runs alone. It
// would panic otherwise: t.Parallel after t.Setenv.
func TestParallelNotWhenTiming(t *testing.T) {
	t.Setenv("LRO_TEST_TIMING", "1")
	Parallel(t)
}
