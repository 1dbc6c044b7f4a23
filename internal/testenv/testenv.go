package testenv

import (
	"flag"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Full reports whether the slow tail of the suite runs: LRO_TEST_FULL=1.
func Full() bool { return os.Getenv("LRO_TEST_FULL") == "1" }

// SkipUnlessFull skips t, a slow case of a behaviour that a faster test
// proves by default, unless LRO_TEST_FULL=1.
func SkipUnlessFull(t testing.TB) {
	t.Helper()
	if !Full() {
		t.Skip("slow: LRO_TEST_FULL=1 runs it (CI does)")
	}
}

// SkipUnlessLoad skips t, which loads the machine (busy loops, sessions
// looping on queries that run to their bound) and would disturb every
// test beside it, CI's timing bounds among them, unless LRO_TEST_LOAD=1:
// it is run on its own (go test -run NAME).
func SkipUnlessLoad(t testing.TB) {
	t.Helper()
	if os.Getenv("LRO_TEST_LOAD") != "1" {
		t.Skip("loads the machine: LRO_TEST_LOAD=1 runs it, alone")
	}
}

// Timing reports whether bounds in wall-clock time are asserted:
// LRO_TEST_TIMING=1, on a machine that runs nothing else (CI).
func Timing() bool { return os.Getenv("LRO_TEST_TIMING") == "1" }

// Within asserts that took is under bound when Timing, and logs it
// otherwise: a loaded machine breaks any bound in time, so the default
// suite proves the behaviour without one and reports the time taken.
func Within(t testing.TB, took, bound time.Duration, what string) bool {
	t.Helper()
	if !Timing() {
		t.Logf("%s: %v (bound %v, asserted with LRO_TEST_TIMING=1)", what, took.Round(time.Millisecond), bound)
		return true
	}
	if took >= bound {
		t.Errorf("%s: took %v, not under %v", what, took.Round(time.Millisecond), bound)
		return false
	}
	return true
}

// Parallel runs t beside the package's other parallel tests (see
// testing.T.Parallel) unless Timing: a test that mostly waits, for a
// deadline or another process, then costs the default suite less, and
// runs alone where bounds in time are asserted, which the load of its
// neighbours would break.
func Parallel(t *testing.T) {
	t.Helper()
	if !Timing() {
		t.Parallel()
	}
}

// JQ returns the path of the jq binary, and skips t, saying so, when
// there is none on PATH.
func JQ(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("needs the jq binary (jq 1.6) on PATH")
	}
	return path
}

// Fuzzing reports whether the test binary is fuzzing (-test.fuzz): a fuzz
// target's bound in time on one input, which finds hangs, holds then and
// with Timing, not in the seed corpus's run of the default suite.
func Fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// Hung reports whether one input of a fuzz target took longer than bound,
// counted only while Fuzzing or with Timing.
func Hung(took, bound time.Duration) bool {
	return took > bound && (Fuzzing() || Timing())
}

// ProcStatus returns a size field of /proc/self/status ("VmRSS",
// "VmHWM"), in bytes, for the tests that bound resident memory.
func ProcStatus(t testing.TB, field string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatalf("reading /proc/self/status: %v", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s in /proc/self/status: %v", field, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
