//go:build race

package proxy

// raceEnabled: the race detector slows everything several times and
// changes what memory is used; memory bounds are not measured under it.
const raceEnabled = true
