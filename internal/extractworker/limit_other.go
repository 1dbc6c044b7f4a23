//go:build !linux || race

package extractworker

// hardLimit reports whether limitMemory enforces a hard bound. Here it
// does not: other systems do not enforce RLIMIT_DATA or RLIMIT_AS on mmap
// alike, and the race detector maps terabytes of shadow memory. The
// worker still has debug.SetMemoryLimit and jqsandbox's heap watchdog, is
// killed at its deadline, and its death cannot take the server with it.
const hardLimit = false

func limitMemory(uint64) error { return nil }
