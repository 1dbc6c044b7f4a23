package jqsandbox

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"
)

// A shape summarises a value as the recursive builtins see it. Subtrees
// shared by reference (reduce range(60) as $i (0; [., .]) builds 2^60
// logical nodes in 60 arrays) count every time they are reachable, because
// that is what tojson, flatten or == pay.
type shape struct {
	nodes int  // logical nodes visited
	ok    bool // false when the walk stopped early
	deep  bool // stopped at a nesting deeper than maxDepth
	// stopped because done was closed (the run is being aborted)
	canceled bool
}

// checkEvery is how many nodes a walk visits between looks at done.
const checkEvery = 1 << 16

// measure walks v and stops as soon as it has seen more than maxNodes nodes,
// a nesting deeper than maxDepth, or done closed. Its recursion is bounded
// by maxDepth.
func measure(v any, maxNodes int, done <-chan struct{}) shape {
	w := walker{max: maxNodes, done: done}
	ok := w.walk(v, 0)
	return shape{nodes: w.nodes, ok: ok, deep: w.deep, canceled: w.canceled}
}

type walker struct {
	nodes, max     int
	deep, canceled bool
	done           <-chan struct{}
}

func (w *walker) walk(v any, d int) bool {
	if w.nodes++; w.nodes > w.max {
		return false
	}
	if d > maxDepth {
		w.deep = true
		return false
	}
	if w.nodes%checkEvery == 0 && isClosed(w.done) {
		w.canceled = true
		return false
	}
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			if !w.walk(x, d+1) {
				return false
			}
		}
	case map[string]any:
		for _, x := range v {
			if !w.walk(x, d+1) {
				return false
			}
		}
	}
	return true
}

// encodedLen returns the length of gojq.Marshal(v) (an upper bound for big
// integers), or ok=false once it exceeds limit. tooDeep reports a value
// nested more than maxDepth levels, which must not be encoded at all.
// The walk also stops when done is closed.
func encodedLen(v any, limit int, done <-chan struct{}) (n int, ok, tooDeep bool) {
	e := lenEncoder{limit: limit, done: done}
	ok = e.add(v, 0)
	return e.n, ok, e.tooDeep
}

type lenEncoder struct {
	n, limit, steps int
	tooDeep         bool
	done            <-chan struct{}
	buf             [64]byte
}

func (e *lenEncoder) add(v any, d int) bool {
	if d > maxDepth {
		e.tooDeep = true
		return false
	}
	if e.steps++; e.steps%checkEvery == 0 && isClosed(e.done) {
		return false
	}
	switch v := v.(type) {
	case nil:
		e.n += 4
	case bool:
		e.n += 5
	case int:
		e.n += len(strconv.AppendInt(e.buf[:0], int64(v), 10))
	case float64:
		e.n += floatLen(&e.buf, v)
	case *big.Int:
		e.n += v.BitLen()*3/10 + 2
	case json.Number:
		e.n += len(v)
	case string:
		if e.n+len(v)+2 > e.limit {
			return false // encoding is at least as long as the string
		}
		e.n += stringLen(v)
	case []any:
		e.n += 1 + len(v)
		for _, x := range v {
			if e.n > e.limit || !e.add(x, d+1) {
				return false
			}
		}
	case map[string]any:
		e.n += 1 + 2*len(v)
		for k, x := range v {
			if e.n += stringLen(k); e.n > e.limit || !e.add(x, d+1) {
				return false
			}
		}
	default:
		e.n += 32
	}
	return e.n <= e.limit
}

// floatLen is the length of gojq's encoding of f.
func floatLen(buf *[64]byte, f float64) int {
	if math.IsNaN(f) {
		return 4
	}
	f = min(max(f, -math.MaxFloat64), math.MaxFloat64)
	format := byte('f')
	if x := math.Abs(f); x != 0 && x < 1e-6 || x >= 1e21 {
		format = 'e'
	}
	b := strconv.AppendFloat(buf[:0], f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		return n - 1
	}
	return len(b)
}

// stringLen is the length of gojq's JSON encoding of s.
func stringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case ' ' <= b && b <= '~' && b != '"' && b != '\\':
				n++
			case b == '"', b == '\\', b == '\b', b == '\f', b == '\n', b == '\r', b == '\t':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}

// isClosed reports whether done is closed; a nil channel never is.
func isClosed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
