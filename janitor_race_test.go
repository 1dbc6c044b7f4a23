//go:build race

package lro_test

// raceEnabled: the race detector slows everything several times; tests
// that count work use smaller counts under it.
const raceEnabled = true
