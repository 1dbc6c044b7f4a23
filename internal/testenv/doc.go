// Package testenv is what the module's tests ask of the machine they run
// on: whether the slow tail of the suite runs (LRO_TEST_FULL=1), whether
// bounds in wall-clock time are asserted (LRO_TEST_TIMING=1), and the jq
// binary, skipping a test that needs it when there is none.
//
// README's `go test ./...` runs on a newcomer's busy laptop: by default it
// asserts no bound in time, which a loaded machine breaks, and leaves out
// the slow cases of behaviours that a faster test proves too. CI sets both
// variables (.ci/run), so that everything still runs somewhere.
package testenv
