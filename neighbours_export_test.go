package lro

import (
	"time"

	"github.com/mcplro/lro/internal/store"
	"github.com/oklog/ulid/v2"
)

// ULIDOf returns a new ULID for t carrying the tag of the offloaders named
// name (the default name when empty), as files written by another process
// of that name have: for tests that plant such files.
func ULIDOf(name string, t time.Time) ulid.ULID {
	if name == "" {
		name = store.DefaultName()
	}
	id, err := store.IDFor(name, t)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return id
}

// Usage returns the bytes the quota counts for o: its files and those
// being written.
func Usage(o *Offloader) int64 { return o.store.Usage() }

// Reserved returns the bytes promised to files being written, which every
// write gives back when it ends.
func Reserved(o *Offloader) int64 { return o.store.Reserved() }

// SetSpoolIdle sets how long a spool may wait for a record before it
// gives its room back, and returns what undoes it.
func SetSpoolIdle(d time.Duration) (undo func()) {
	was := spoolIdle
	spoolIdle = d
	return func() { spoolIdle = was }
}

// SetRoomWait sets how long a write waits for room that writes in
// progress hold, and returns what undoes it.
func SetRoomWait(d time.Duration) (undo func()) {
	was := store.RoomWait
	store.RoomWait = d
	return func() { store.RoomWait = was }
}
