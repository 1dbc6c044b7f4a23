package extract

import (
	"time"

	"github.com/mcplro/lro/internal/extractworker"
)

// What the root package's tests look at inside the tool: nothing else
// calls these.

// WorkerStats returns the state of the worker pool that runs o's queries.
func (o *Tool) WorkerStats() extractworker.Stats {
	return extractworker.PoolFor(o.env.Limits.withDefaults().pool()).Stats()
}

// LocalCopies returns how many local copies of a store's files o keeps.
func (o *Tool) LocalCopies() int { return o.copies.count() }

// Records returns the decoded records o keeps in this process.
func (o *Tool) Records() *extractworker.FileCache { return o.records }

// OwnFile returns the name in the FS of the offloaded file at path, if o
// wrote it.
func (o *Tool) OwnFile(path string) (string, error) { return o.ownFile(path) }

// OpenFile opens the offloaded file name as a call does, and returns its
// key in the caches and its size.
func (o *Tool) OpenFile(name string) (key string, size int64, err error) {
	f, err := o.openOffload(name)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return f.key, f.size, nil
}

// RecipesOfFile returns the recipes a call finds for the file name, whose
// header has the schema version and detail level given.
func (o *Tool) RecipesOfFile(name, schemaVersion, detail string) ([]Recipe, error) {
	f, err := o.openOffload(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return o.recipesOfFile(f, header{SchemaVersion: schemaVersion, Detail: detail}, o.env.Limits.withDefaults(), nil)
}

// Ticket is a call admitted by Enter.
type Ticket = admitted

// Enter, Reserve and Leave admit a call, let it hold bytes, and end it,
// as a call does; Held returns the calls and bytes admitted.
func Enter(maxCalls int, timeout time.Duration) (*Ticket, error) {
	return extractCalls.enter(maxCalls, timeout)
}

// Reserve: see Enter.
func Reserve(t *Ticket, n, maxBytes int64) error { return extractCalls.reserve(t, n, maxBytes) }

// Leave: see Enter.
func Leave(t *Ticket) { extractCalls.leave(t) }

// Held: see Enter.
func Held() (calls int, bytes int64) {
	extractCalls.mu.Lock()
	defer extractCalls.mu.Unlock()
	return extractCalls.calls, extractCalls.bytes
}
