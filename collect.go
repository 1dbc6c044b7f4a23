package lro

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcplro/lro/internal/jsonscan"
)

// collectorKey is the context key of the collector the middleware installs.
type collectorKey struct{}

// collector holds the result set a handler hands over with Collect.
type collector struct {
	o         *Offloader
	threshold int

	mu      sync.Mutex
	set     bool
	promise bool // Collect told the handler the set would be offloaded
	records []json.RawMessage
	scores  []float64
	tokens  int
	err     error
}

// Collect hands the middleware the complete result set of the current tool
// call, to be judged instead of what the handler returns. Use it where the
// returned result is not the set the specification means:
//
//   - inject_context formats a context string under a token budget, but
//     must be judged on its pre-budget memories;
//   - a paginated tool returns one page, but the whole set must be judged
//     before a cursor exists.
//
// Each record is marshaled with encoding/json (a json.RawMessage is taken
// as it is); scores, when not nil, are the records' relevance scores, for
// the summary only.
//
// Collect reports whether the set will be offloaded. When it returns true
// the middleware replaces whatever the handler returns with the
// descriptor, so the handler may return at once without formatting or
// creating a cursor: an offloaded set never has a cursor. When it returns
// false (the set fits, offloading is off, or no middleware is installed),
// the handler's own result goes out unchanged.
func Collect[T any](ctx context.Context, records []T, scores []float64) bool {
	c, _ := ctx.Value(collectorKey{}).(*collector)
	if c == nil {
		return false
	}
	raw := make([]json.RawMessage, len(records))
	for i := range records {
		b, err := marshalRecord(records[i])
		if err != nil {
			c.mu.Lock()
			c.set, c.err = true, &RecordError{Index: i, Err: err}
			c.mu.Unlock()
			return false
		}
		raw[i] = b
	}
	tokens := c.o.estimateRecords(sliceRecords{lines: raw})
	promise := c.o.cfg.IsEnabled() && !c.o.closed.Load() && tokens > c.threshold
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set, c.records, c.scores, c.tokens, c.err, c.promise = true, raw, scores, tokens, nil, promise
	return promise
}

func marshalRecord(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if !jsonscan.Valid(raw) {
			return nil, errNotJSON
		}
		return raw, nil
	}
	return json.Marshal(v)
}

// collected returns what the handler collected, if anything, and whether
// the handler was told it would be offloaded.
func (c *collector) collected() (records []json.RawMessage, scores []float64, tokens int, ok, promised bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.records, c.scores, c.tokens, c.set, c.promise, c.err
}
