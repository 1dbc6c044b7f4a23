package extractworker

import (
	"strconv"
	"strings"
	"sync"

	"github.com/mcplro/lro/internal/jqsandbox"
)

// CountCache keeps how many results a query had over a file, once a run
// counted them exactly (an output full, counted to the end of the
// records): the same query of the same file again stops once its output
// is full, and states the same count (jqsandbox.Limits.KnownResults). A
// file's key names its content, which never changes, so a count is never
// stale. A select's second query then costs what it shows, not a pass
// over every record.
type CountCache struct {
	mu     sync.Mutex
	counts map[string]int
}

// maxCounts bounds the counts kept; beyond it they are all let go (a
// count costs at most one pass to learn again).
const maxCounts = 4096

// countKey identifies a query of a file: the file's content, the mode,
// the query and its variables' values.
func countKey(file string, req *Request) string {
	var b strings.Builder
	b.WriteString(file)
	b.WriteByte(0)
	b.WriteString(strconv.FormatBool(req.Slurp))
	b.WriteByte(0)
	b.WriteString(req.Query)
	for _, v := range req.Vars {
		b.WriteByte(0)
		b.WriteString(v)
	}
	b.WriteByte(0)
	b.Write(req.Values)
	return b.String()
}

// get returns the count kept for key, or 0.
func (c *CountCache) get(key string) int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[key]
}

// learn keeps the count of a run that counted every result exactly: its
// output was full, nothing stopped it, and the count was not given.
func (c *CountCache) learn(key string, res jqsandbox.Result, err error, given int) {
	if c == nil || err != nil || !res.Truncated || res.Uncounted || given > 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil || len(c.counts) >= maxCounts {
		c.counts = map[string]int{}
	}
	c.counts[key] = len(res.Values) + res.Omitted
}
