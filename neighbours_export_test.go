package lro

import (
	"time"

	"github.com/oklog/ulid/v2"
)

// ULIDOf returns a new ULID for t carrying the tag of the offloaders named
// name (the default name when empty), as files written by another process
// of that name have: for tests that plant such files.
func ULIDOf(name string, t time.Time) ulid.ULID {
	if name == "" {
		name = defaultName()
	}
	id, err := idFor(tagOf(name), t)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return id
}

// Usage returns the bytes the quota counts for o: its files and those
// being written.
func Usage(o *Offloader) int64 { return o.usage() }

// Reserved returns the bytes promised to files being written, which every
// write gives back when it ends.
func Reserved(o *Offloader) int64 {
	x := o.index()
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.reserved
}

// ListenStdio serves ss on in and out as ServeStdio does, with at most
// limit requests but tools/call in flight.
var ListenStdio = listenStdio
