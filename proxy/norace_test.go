//go:build !race

package proxy

// raceEnabled: see race_test.go.
const raceEnabled = false
