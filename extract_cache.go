package lro

import (
	"container/list"
	"strings"
	"sync"

	"github.com/mcplro/lro/internal/jqsandbox"
)

// DefaultExtractCacheBytes is how many bytes of offloaded files lro_extract
// keeps decoded in memory by default (see ExtractLimits.CacheBytes).
const DefaultExtractCacheBytes = 32 << 20

// recordCache keeps the decoded records of recently queried files. Decoding
// is most of the cost of a query, a model usually asks several questions
// of the same file, and published files never change, so a file is decoded
// once. Its budget counts file bytes; decoded records take several times
// more memory.
type recordCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	order  *list.List // of *cachedFile, most recent first
	byName map[string]*list.Element
}

type cachedFile struct {
	name    string
	size    int64
	records *jqsandbox.Records
}

func newRecordCache(budget int64) *recordCache {
	return &recordCache{budget: budget, order: list.New(), byName: map[string]*list.Element{}}
}

// fits reports whether a file of size bytes may be cached: at most half
// the budget, so one file never evicts everything.
func (c *recordCache) fits(size int64) bool { return c.budget > 0 && size <= c.budget/2 }

func (c *recordCache) get(name string, size int64) (*jqsandbox.Records, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byName[name]
	if !ok {
		return nil, false
	}
	f := el.Value.(*cachedFile)
	if f.size != size { // not the file that was cached
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return f.records, true
}

func (c *recordCache) put(name string, size int64, records *jqsandbox.Records) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byName[name]; ok {
		c.remove(el)
	}
	for c.used+size > c.budget && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
	c.byName[name] = c.order.PushFront(&cachedFile{name: name, size: size, records: records})
	c.used += size
}

// forget drops a file that no longer exists.
func (c *recordCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byName[name]; ok {
		c.remove(el)
	}
}

func (c *recordCache) remove(el *list.Element) {
	f := c.order.Remove(el).(*cachedFile)
	delete(c.byName, f.name)
	c.used -= f.size
}

// queryCache keeps compiled recipes. Their filters are ours, not the
// model's, so they are compiled without the guards hostile queries need;
// the parameters the model binds are checked by recipeParam. A compiled
// query caches the regular expressions it has seen, so each is recompiled
// after a number of runs to keep that bounded.
type queryCache struct {
	mu      sync.Mutex
	queries map[string]*cachedQuery
}

type cachedQuery struct {
	q    *jqsandbox.Query
	runs int
}

const (
	maxCachedQueries = 64
	maxRunsPerQuery  = 256
)

func (c *queryCache) compile(filter string, names []string) (*jqsandbox.Query, error) {
	key := filter + "\x00" + strings.Join(names, "\x00")
	c.mu.Lock()
	if cq, ok := c.queries[key]; ok && cq.runs < maxRunsPerQuery {
		cq.runs++
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
	c.queries[key] = &cachedQuery{q: q, runs: 1}
	return q, nil
}
