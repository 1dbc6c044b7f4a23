//go:build race

package extractworker

// raceEnabled: built with the race detector, which maps terabytes of
// shadow memory (no hard memory limit can apply) and whose reports from
// workers should reach the test output.
const raceEnabled = true
