//go:build !race

package lro_test

// extractRace: see extract_race_test.go.
const extractRace = false
