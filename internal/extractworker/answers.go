package extractworker

import (
	"strconv"
	"strings"
	"sync"
)

// AnswerCache keeps the answers of trusted requests (recipes and
// structured questions, whose programs are ours) by file and request:
// asked again of the same file, a question is answered without decoding
// or computing anything (issue 40: a structured question's second call
// cost 0.91x its first; a sort of 100,000 records costs its sort every
// time even with the records cached). It is sound because a file's key
// names its content (FileID.Key: device, inode, size and modification
// time; a published file is written once and replaced only by another
// inode), and a trusted program's answer depends on the file and the
// request alone (one that reads the clock, now, is never kept). Only
// answers without a failure, counted in full, are kept.
//
// The budget counts the answers' bytes (at most one request's output
// bound each) and their keys; the least recently used go first. A
// worker keeps DefaultAnswerBytes of them beside its FileCache. A nil
// cache keeps nothing; it is safe for concurrent use.
type AnswerCache struct {
	mu   sync.Mutex
	kept lru[Response]
}

// DefaultAnswerBytes is the AnswerCache budget of a worker: a hundred
// answers of the default output bound (about 25 KB), or more small ones.
const DefaultAnswerBytes = 4 << 20

// NewAnswerCache returns a cache of budget bytes; zero or negative keeps
// nothing.
func NewAnswerCache(budget int64) *AnswerCache {
	return &AnswerCache{kept: newLRU[Response](budget)}
}

// answerKey returns the key of req's answer over the file key, or "" when
// its answer is not kept: a query of the model's own (it may read the
// clock or the environment), one of ours that reads the clock, or a text
// request.
func answerKey(file string, req *Request) string {
	if !req.Trusted || req.Text != nil || strings.Contains(req.Query, "now") {
		return ""
	}
	return countKey(file, req) + "\x00" + strconv.Itoa(req.Limits.MaxOutputBytes)
}

// get returns a copy of the answer kept under key.
func (c *AnswerCache) get(key string) (*Response, bool) {
	if c == nil || key == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.kept.get(key)
	if !ok {
		return nil, false
	}
	return &r, true
}

// put keeps resp under key when it is a whole answer and fits in half
// the budget, evicting the least recently used.
func (c *AnswerCache) put(key string, resp *Response) {
	if c == nil || key == "" || resp.Failure != nil || resp.Uncounted || resp.Retire {
		return
	}
	size := int64(len(key)) + 64
	for _, v := range resp.Values {
		size += int64(len(v)) + 24
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kept.budget <= 0 || size > c.kept.budget/2 {
		return
	}
	r := *resp
	r.Cached = false
	c.kept.put(key, size, r)
}

// Used returns the bytes kept.
func (c *AnswerCache) Used() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept.used
}

// Forget drops the answers over the files whose key starts with prefix
// (a file that no longer exists, in whatever version was kept).
func (c *AnswerCache) Forget(prefix string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept.forget(prefix)
}
