//go:build !race

package lro_test

// raceEnabled: see janitor_race_test.go.
const raceEnabled = false
