package extract

import (
	"context"
	"time"

	"github.com/mcplro/lro/internal/admit"
	"github.com/mcplro/lro/internal/extractworker"
	"github.com/mcplro/lro/internal/recipes"
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
func (o *Tool) RecipesOfFile(name, schemaVersion, detail string) ([]recipes.Recipe, error) {
	f, err := o.openOffload(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return o.recipesOfFile(f, header{SchemaVersion: schemaVersion, Detail: detail}, o.env.Limits.withDefaults(), nil)
}

// Ticket is a call admitted by Enter.
type Ticket = admit.Ticket

// Enter admits a call of the session ctx names as a call does, under
// maxCalls and ending within timeout; the ticket's Reserve and Leave let
// it hold bytes and end it. Held returns the calls and bytes admitted.
func Enter(ctx context.Context, maxCalls int, timeout time.Duration) (*Ticket, error) {
	return enterCall(ctx, Limits{MaxCalls: maxCalls, Timeout: timeout})
}

// Held: see Enter.
func Held() (calls int, bytes int64) {
	calls, _ = extractCalls.Held()
	return calls, extractCalls.Bytes()
}
