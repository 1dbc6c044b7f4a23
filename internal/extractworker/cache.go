package extractworker

import (
	"container/list"
	"strings"
	"sync"

	"github.com/mcplro/lro/internal/jqsandbox"
)

// FileCache keeps the decoded records of recently queried files. Decoding
// is most of the cost of a query, a model usually asks several questions
// of the same file, and published files never change, so a file is decoded
// once: however many callers want it at the same time, one decodes and the
// others wait for its records. The budget counts file bytes; decoded
// records take several times more memory (about 4.4 times for memories).
//
// A FileCache is safe for concurrent use.
type FileCache struct {
	mu      sync.Mutex
	budget  int64
	used    int64
	order   *list.List // of *cachedFile, most recent first
	byKey   map[string]*list.Element
	loading map[string]*loading
}

type cachedFile struct {
	key     string
	size    int64
	records *jqsandbox.Records
}

// loading is a decoding in progress; done is closed when records or err
// are set.
type loading struct {
	done    chan struct{}
	records *jqsandbox.Records
	err     error
}

// NewFileCache returns a cache of budget file bytes; zero or negative
// caches nothing.
func NewFileCache(budget int64) *FileCache {
	return &FileCache{budget: budget, order: list.New(), byKey: map[string]*list.Element{}, loading: map[string]*loading{}}
}

// Fits reports whether a file of size bytes may be cached: at most half
// the budget, so that one file never evicts everything.
func (c *FileCache) Fits(size int64) bool { return c.budget > 0 && size <= c.budget/2 }

// Get returns the records cached under key.
func (c *FileCache) Get(key string) (*jqsandbox.Records, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cachedFile).records, true
}

// Load returns the records cached under key, or those decode returns,
// which it caches. Callers that ask for the same key while decode runs
// wait for its outcome instead of decoding the file again.
func (c *FileCache) Load(key string, size int64, decode func() (*jqsandbox.Records, error)) (*jqsandbox.Records, error) {
	c.mu.Lock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*cachedFile).records, nil
	}
	if l, ok := c.loading[key]; ok {
		c.mu.Unlock()
		<-l.done
		return l.records, l.err
	}
	l := &loading{done: make(chan struct{})}
	c.loading[key] = l
	c.mu.Unlock()

	l.records, l.err = decode()

	c.mu.Lock()
	delete(c.loading, key)
	if l.err == nil {
		c.put(key, size, l.records)
	}
	c.mu.Unlock()
	close(l.done)
	return l.records, l.err
}

// put caches records, evicting the least recently used files; c.mu is
// held.
func (c *FileCache) put(key string, size int64, records *jqsandbox.Records) {
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	for c.used+size > c.budget && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
	c.byKey[key] = c.order.PushFront(&cachedFile{key: key, size: size, records: records})
	c.used += size
}

// Forget drops the files whose key starts with prefix (a file that no
// longer exists, in whatever version was cached).
func (c *FileCache) Forget(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, el := range c.byKey {
		if strings.HasPrefix(key, prefix) {
			c.remove(el)
		}
	}
}

func (c *FileCache) remove(el *list.Element) {
	f := c.order.Remove(el).(*cachedFile)
	delete(c.byKey, f.key)
	c.used -= f.size
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
