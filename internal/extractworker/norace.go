//go:build !race

package extractworker

const raceEnabled = false
