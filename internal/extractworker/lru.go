package extractworker

import (
	"container/list"
	"strings"
)

// lru keeps values by key within a budget of bytes, the least recently
// used going first: what FileCache and AnswerCache share. It is not safe
// for concurrent use; they hold their lock around it.
type lru[V any] struct {
	budget int64
	used   int64
	order  *list.List // of *lruEntry[V], most recent first
	byKey  map[string]*list.Element
}

type lruEntry[V any] struct {
	key   string
	size  int64
	value V
}

func newLRU[V any](budget int64) lru[V] {
	return lru[V]{budget: budget, order: list.New(), byKey: map[string]*list.Element{}}
}

// peek returns the value kept under key, leaving its place in the order.
func (c *lru[V]) peek(key string) (V, bool) {
	el, ok := c.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	return el.Value.(*lruEntry[V]).value, true
}

// touch makes key the most recently used.
func (c *lru[V]) touch(key string) {
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
	}
}

// get returns the value kept under key and makes it the most recently
// used.
func (c *lru[V]) get(key string) (V, bool) {
	v, ok := c.peek(key)
	c.touch(key)
	return v, ok
}

// put keeps value, of size bytes, under key in place of what was there,
// evicting the least recently used until it fits.
func (c *lru[V]) put(key string, size int64, value V) {
	c.drop(key)
	for c.used+size > c.budget && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
	c.byKey[key] = c.order.PushFront(&lruEntry[V]{key: key, size: size, value: value})
	c.used += size
}

// drop removes what is kept under key.
func (c *lru[V]) drop(key string) {
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
}

// forget removes what is kept under the keys that start with prefix (a
// file that no longer exists, in whatever version was kept).
func (c *lru[V]) forget(prefix string) {
	for key, el := range c.byKey {
		if strings.HasPrefix(key, prefix) {
			c.remove(el)
		}
	}
}

func (c *lru[V]) remove(el *list.Element) {
	e := c.order.Remove(el).(*lruEntry[V])
	delete(c.byKey, e.key)
	c.used -= e.size
}
