//go:build race

package lro_test

// extractRace: the race detector slows queries several times; the attack
// tests send fewer calls under it, and still assert every bound.
const extractRace = true
