package extractworker

import (
	"strings"
	"sync"

	"github.com/mcplro/lro/internal/jqsandbox"
)

// FileCache keeps the decoded records of recently queried files. Decoding
// is most of the cost of a query, a model usually asks several questions
// of the same file, and published files never change, so a file is decoded
// once: however many callers want it at the same time, one decodes and the
// others wait for its records. Records are decoded with the projection the
// queries need (jqsandbox.Projection): a query that needs more decodes the
// file again with the union, which replaces the cached records. A file
// too large to be decoded beforehand is decoded as its query runs, which
// may Offer what it kept. The budget counts decoded bytes
// (jqsandbox.Records.Bytes, an estimate).
//
// A FileCache is safe for concurrent use.
type FileCache struct {
	mu      sync.Mutex
	kept    lru[*jqsandbox.Records] // sized in decoded bytes
	loading map[string]*loading
}

// loading is a decoding in progress; done is closed when records or err
// are set.
type loading struct {
	done    chan struct{}
	records *jqsandbox.Records
	err     error
}

// NewFileCache returns a cache of budget decoded bytes; zero or negative
// caches nothing.
func NewFileCache(budget int64) *FileCache {
	return &FileCache{kept: newLRU[*jqsandbox.Records](budget), loading: map[string]*loading{}}
}

// Fits reports whether records of size decoded bytes may be cached: at
// most half the budget, so that one file never evicts everything. Given a
// file's size, it tells whether its records might fit.
func (c *FileCache) Fits(size int64) bool { return c.kept.budget > 0 && size <= c.kept.budget/2 }

// Get returns the records cached under key.
func (c *FileCache) Get(key string) (*jqsandbox.Records, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept.get(key)
}

// Load returns the records cached under key when their projection covers
// want, or those decode returns, which it caches when they fit. decode is
// given want, united with the projection of the records cached, so that a
// file queried in several ways ends up decoded once for all. Callers that
// ask for the same key while decode runs wait for its outcome instead of
// decoding the file again.
func (c *FileCache) Load(key string, want jqsandbox.Projection, decode func(jqsandbox.Projection) (*jqsandbox.Records, error)) (*jqsandbox.Records, error) {
	c.mu.Lock()
	for {
		if recs, ok := c.kept.peek(key); ok && recs.Projection().Covers(want) {
			c.kept.touch(key)
			c.mu.Unlock()
			return recs, nil
		}
		l, ok := c.loading[key]
		if !ok {
			break
		}
		c.mu.Unlock()
		<-l.done
		if l.err != nil {
			return nil, l.err
		}
		if l.records.Projection().Covers(want) {
			return l.records, nil
		}
		c.mu.Lock()
	}
	proj := want
	if recs, ok := c.kept.peek(key); ok {
		proj = proj.Union(recs.Projection())
	}
	l := &loading{done: make(chan struct{})}
	c.loading[key] = l
	c.mu.Unlock()

	l.records, l.err = decode(proj)

	c.mu.Lock()
	delete(c.loading, key)
	if l.err == nil {
		c.put(key, l.records)
	}
	c.mu.Unlock()
	close(l.done)
	return l.records, l.err
}

// put caches records under key, evicting the least recently used files,
// unless they do not fit (see Fits); c.mu is held.
func (c *FileCache) put(key string, records *jqsandbox.Records) {
	c.kept.drop(key)
	if size := records.Bytes(); c.Fits(size) {
		c.kept.put(key, size, records)
	}
}

// Warm caches records decoded elsewhere (a file just written) under key,
// unless the file has records cached or loading already, or they do not
// fit.
func (c *FileCache) Warm(key string, records *jqsandbox.Records) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.kept.peek(key); ok {
		return
	}
	if _, ok := c.loading[key]; ok {
		return
	}
	c.put(key, records)
}

// Room returns the most decoded bytes the records of one file may take
// to be cached (see Fits); zero when the cache is off.
func (c *FileCache) Room() int64 {
	if c.kept.budget <= 0 {
		return 0
	}
	return c.kept.budget / 2
}

// Offer caches records that a query decoded as it ran (see
// jqsandbox.Query.RunKeeping) under key, in place of cached records
// that do not cover them, unless they do not fit or the file is being
// decoded already.
func (c *FileCache) Offer(key string, records *jqsandbox.Records) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.loading[key]; ok {
		return
	}
	if recs, ok := c.kept.peek(key); ok && recs.Projection().Covers(records.Projection()) {
		return
	}
	c.put(key, records)
}

// Used returns the decoded bytes cached.
func (c *FileCache) Used() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept.used
}

// Forget drops the files whose key starts with prefix (a file that no
// longer exists, in whatever version was cached).
func (c *FileCache) Forget(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept.forget(prefix)
}

// QueryCache keeps compiled recipes. Their filters are ours, not the
// model's, so they are compiled without the guards hostile queries need;
// the values the model binds are checked by the caller. A compiled query
// caches every regular expression it compiles (gojq keeps them in the
// Query), so it is compiled afresh after a number of runs, or sooner once
// the patterns bound to it have cost enough to compile. The zero value is
// ready to use; it is safe for concurrent use.
type QueryCache struct {
	mu      sync.Mutex
	queries map[string]*cachedQuery
}

type cachedQuery struct {
	q      *jqsandbox.Query
	runs   int
	weight int // the PatternCost of its runs so far
}

const (
	maxCachedQueries = 64
	maxRunsPerQuery  = 256
	// maxPatternWeight bounds the compiled instructions of the regular
	// expressions one kept query may have cached: 64k instructions are a
	// few megabytes.
	maxPatternWeight = 1 << 16
)

// Compile returns the compiled filter with the variables names, from the
// cache when it is fresh enough; patternCost is what this run's patterns
// cost to compile (see Request.PatternCost).
func (c *QueryCache) Compile(filter string, names []string, patternCost int) (*jqsandbox.Query, error) {
	key := filter + "\x00" + strings.Join(names, "\x00")
	c.mu.Lock()
	if cq, ok := c.queries[key]; ok && cq.runs < maxRunsPerQuery && cq.weight+patternCost <= maxPatternWeight {
		cq.runs++
		cq.weight += patternCost
		c.mu.Unlock()
		return cq.q, nil
	}
	c.mu.Unlock()
	q, err := jqsandbox.CompileTrusted(filter, names)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queries == nil || len(c.queries) >= maxCachedQueries {
		c.queries = map[string]*cachedQuery{}
	}
	c.queries[key] = &cachedQuery{q: q, runs: 1, weight: patternCost}
	return q, nil
}
