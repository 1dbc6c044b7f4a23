package lro

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// An offload writes its file streaming, with a few MB of its own; what
// raises the server's memory is the handler's result, several times the
// file (a typed mcp-go tool holds its records as values, their JSON
// text, and the encoder's grown buffers: about 4.5 times a 68 MB file).
// Once the descriptor has replaced it, that memory is garbage, but the Go
// runtime keeps the pages: its scavenger returns only what lies beyond
// about twice the live heap, so a server whose store is a few hundred MB
// stays at its peak for good (issue 40: 508 MB after a 68 MB offload).
//
// So an offload that wrote at least releaseBytes asks the runtime to give
// the memory back: debug.FreeOSMemory, a full collection and a return of
// every free page, after one collection more (see below). It is blunt, and worth it only there: it costs one
// collection of the live heap (tens of ms), an offload of 16 MiB costs
// more than that, and its result held several times that in pages the
// process would otherwise keep. It runs releaseDelay after the offload,
// in the background: by then the adapter has dropped the handler's result
// and sent the descriptor, so the collection frees the result and the
// call does not wait for it. Offloads within that delay share one
// release.
const (
	releaseBytes = 16 << 20
	releaseDelay = 500 * time.Millisecond
)

// memRelease is the process's one pending release: FreeOSMemory acts on
// the whole process, whatever Offloader asks for it.
var memRelease struct {
	mu       sync.Mutex
	pending  bool
	released atomic.Int64 // releases done, for the tests
}

// releaseAfter schedules a release of free memory to the OS after an
// offload that wrote n bytes, if n is large enough to be worth one.
func releaseAfter(n int64) {
	if n < releaseBytes {
		return
	}
	memRelease.mu.Lock()
	defer memRelease.mu.Unlock()
	if memRelease.pending {
		return
	}
	memRelease.pending = true
	time.AfterFunc(releaseDelay, func() {
		memRelease.mu.Lock()
		memRelease.pending = false
		memRelease.mu.Unlock()
		// Twice: what a sync.Pool holds survives one collection as its
		// victim, and encoding/json pools the encoder whose buffer grew
		// to the size of the result that a handler marshaled.
		runtime.GC()
		debug.FreeOSMemory()
		memRelease.released.Add(1)
	})
}
