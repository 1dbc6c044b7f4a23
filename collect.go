package lro

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"sync"

	"github.com/mcplro/lro/internal/jsonscan"
	rec "github.com/mcplro/lro/internal/records" // aliased: Collect's parameters are named records
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
	spool   *spool        // the records of a streamed set too large to hold
	spooled *spoolRecords // and its finished records
	lost    error         // why a streamed set could not be spooled: it gets the fallback
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
// The set is judged whatever the call's page size, as the specification's
// precedence of offloading over pagination asks: a list_memories(limit: 5)
// whose handler collects 2,000 memories returns a descriptor of all 2,000
// (logged once per tool). Collect only the records a caller's cap allows
// ("the 5 best") when the limit is one.
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
	tokens := c.o.estimateRecords(rec.Slice{Lines: raw})
	promise := c.o.cfg.IsEnabled() && !c.o.life.closed.Load() && tokens > c.threshold
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set, c.records, c.scores, c.tokens, c.err, c.promise = true, raw, scores, tokens, nil, promise
	return promise
}

// CollectSeq is [Collect] for a set read one record at a time, from a
// database cursor for example: a set of any size is offloaded with
// little memory. It reads every record of records, each one JSON value
// (a *RecordError otherwise). While their estimate is under the
// threshold it holds them; past it, it writes them to a temporary file
// of the Offloader as they come, and the middleware makes that the
// result's file.
//
// When the set will be offloaded, CollectSeq returns offloaded == true
// and no records: the handler may return at once, and the middleware
// replaces its result with the descriptor. Otherwise (the set fits,
// offloading is off, or no middleware is installed) it returns every
// record, in order, for the handler to send as it always would. An error
// of records ends the reading and is returned, and nothing is collected.
// Streamed sets have no scores.
func CollectSeq(ctx context.Context, records iter.Seq2[json.RawMessage, error]) (inline []json.RawMessage, offloaded bool, err error) {
	c, _ := ctx.Value(collectorKey{}).(*collector)
	streams := c != nil && c.o.cfg.IsEnabled() && !c.o.life.closed.Load()
	var (
		quarters int // the running estimate, in quarter tokens
		sp       *spool
	)
	fail := func(e error) ([]json.RawMessage, bool, error) {
		if sp != nil {
			sp.discard()
		}
		if c != nil {
			c.mu.Lock()
			c.set, c.err = true, e
			c.mu.Unlock()
		}
		return nil, false, e
	}
	var (
		head    []json.RawMessage // the first records, for a fallback, once spooling
		headQ   int
		lost    error // the spool failed: only count the rest
		counted int
	)
	for rec, rerr := range records {
		if rerr != nil {
			return fail(rerr)
		}
		if !jsonscan.Valid(rec) {
			return fail(&RecordError{Index: counted, Err: errNotJSON})
		}
		counted++
		q := quarterTokens(rec) + 1 // and its separator
		quarters += q
		switch {
		case lost != nil:
			continue
		case sp != nil:
			if headQ+q <= 4*c.threshold {
				head, headQ = append(head, bytes.Clone(rec)), headQ+q
			}
			if err := sp.add(ctx, rec); err != nil {
				var recErr *RecordError
				if errors.As(err, &recErr) {
					return fail(err)
				}
				lost = err
				sp.discard()
				sp = nil
			}
			continue
		}
		inline = append(inline, bytes.Clone(rec)) // a cursor may reuse its buffer
		if !streams || (quarters+3)/4 <= c.threshold {
			continue
		}
		// Past the threshold: from here on the records go to disk. The
		// first of them stay in memory too, for the fallback a failed
		// write gets.
		for _, r := range inline {
			if rq := quarterTokens(r) + 1; headQ+rq <= 4*c.threshold {
				head, headQ = append(head, r), headQ+rq
			}
		}
		if sp, err = c.o.newSpool(ctx); err != nil {
			lost, sp = err, nil
		}
		for _, r := range inline {
			if sp == nil {
				break
			}
			if err := sp.add(ctx, r); err != nil {
				lost = err
				sp.discard()
				sp = nil
			}
		}
		inline = nil
	}
	if c == nil {
		return inline, false, nil
	}
	tokens := (quarters + 3) / 4
	if sp == nil && lost == nil {
		if !c.o.heuristic() {
			// The running estimate was the heuristic's: a set that is
			// held whole is measured with the estimator chosen.
			tokens = c.o.estimateRecords(rec.Slice{Lines: inline})
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.set, c.records, c.scores, c.tokens, c.err, c.promise = true, inline, nil, tokens, nil, false
		return inline, false, nil
	}
	var done *spoolRecords
	if lost == nil {
		if done, err = sp.finish(); err != nil {
			sp.discard()
			sp, lost = nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set, c.records, c.scores, c.tokens, c.err, c.promise = true, head, nil, tokens, nil, true
	c.spool, c.spooled, c.lost = sp, done, lost
	if lost != nil {
		c.spooled = &spoolRecords{n: counted} // counted only: the head is all there is
	}
	return nil, true, nil
}

// discard removes what the collector spooled, once the call is served.
func (c *collector) discard() {
	c.mu.Lock()
	sp := c.spool
	c.spool = nil
	c.mu.Unlock()
	if sp != nil {
		sp.discard()
	}
}

// headRecords are the first records of a streamed set that could not be
// spooled, and how many it had: what its fallback keeps and tells.
type headRecords struct {
	rec.Slice
	n    int
	lost error // why the set could not be spooled
}

func (h headRecords) Count() int { return h.n }

func marshalRecord(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if !jsonscan.Valid(raw) {
			return nil, errNotJSON
		}
		return raw, nil
	}
	return json.Marshal(v)
}

// A collection is the set a handler handed to Collect: its records, their
// estimate, and whether the handler was told they would be offloaded (it
// may then have returned a placeholder).
type collection struct {
	records  rec.Source
	tokens   int
	promised bool
}

// collected returns what the handler collected, nil if nothing, or the
// error that made its records unusable.
func (c *collector) collected() (*collection, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || !c.set {
		return nil, c.err
	}
	col := &collection{tokens: c.tokens, promised: c.promise}
	switch {
	case c.lost != nil:
		col.records = headRecords{rec.Slice{Lines: c.records}, c.spooled.n, c.lost}
	case c.spooled != nil:
		col.records = c.spooled
	default:
		col.records = rec.Slice{Lines: c.records, Scores: c.scores}
	}
	return col, nil
}
