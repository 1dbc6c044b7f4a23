package records

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/mcplro/lro/internal/jsonscan"
)

// treeChildren is the member that makes a node of a tree: a directory
// listing, an org chart, a DOM. Filesystem servers return such trees
// (each node a name, a type and its children).
const treeChildren = "children"

var childrenKey = []byte(`"` + treeChildren + `"`)

// isTree reports whether data, a valid JSON array or object, is a tree: a
// node (an object with a children array) or an array of nodes, one of the
// first of which has a child. Its records are then its nodes, not the few
// roots that hold them all.
func isTree(data []byte) bool {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return false
	}
	if data[0] == '{' {
		return hasChildren(data)
	}
	found, seen := false, 0
	_ = jsonscan.EachElement(data, func(el []byte) bool {
		found = len(el) > 0 && el[0] == '{' && hasChildren(el)
		seen++
		return !found && seen < treeProbe
	})
	return found
}

// treeProbe is how many elements of an array isTree looks at: a tree's
// first roots have children, and a long array of other records costs no
// pass of its own.
const treeProbe = 16

// hasChildren reports whether node has a children array whose first
// element is an object.
func hasChildren(node []byte) bool {
	// Lookup compares keys as written, so the key written is a necessary
	// condition, which bytes.Contains finds faster than Lookup skips the
	// members before it.
	if !bytes.Contains(node, childrenKey) {
		return false
	}
	kids, _ := jsonscan.Lookup(node, treeChildren)
	return areNodes(kids)
}

// isTreeObject is isTree of obj, an object whose members fields are, as
// the validating pass found them (nil when it did not): its children are
// then looked up among them, with no pass over the object. A result's one
// large array of records is most of it, and a third of an offload of
// 10,000 memories went to skipping it in search of children.
func isTreeObject(obj []byte, fields []jsonscan.Field) bool {
	if fields == nil {
		return isTree(obj)
	}
	for _, f := range fields {
		if string(f.Key) == treeChildren {
			return areNodes(f.Value)
		}
	}
	return false
}

// areNodes reports whether kids is an array whose first element is an
// object.
func areNodes(kids []byte) bool {
	if len(kids) == 0 || kids[0] != '[' {
		return false
	}
	first := false
	_ = jsonscan.EachElement(kids, func(el []byte) bool {
		first = len(el) > 0 && el[0] == '{'
		return false
	})
	return first
}

// treeRecords are the nodes of a tree, depth first, one record each: the
// node's members but its children, after a "path" member that joins the
// names from the root ("src/lro/tree.go"), so that one select finds a
// node at any depth, and a list of paths reads like find(1). A node
// without a string name is named by its position among its siblings; a
// node that has a "path" of its own keeps it, and the joined one is
// "tree_path".
//
// A path longer than maxPath keeps its end, after "…/": a path is as
// long as the tree is deep, and whole paths made a file quadratic in the
// depth (4,900 nested nodes of 20-byte names, 284 KB, made 252 MB).
// maxPath shares treePathShare times the tree's bytes between its nodes,
// so that the records' paths take at most that, and the file, with the
// nodes' own members and each record's few bytes of JSON, stays within
// about four times the tree (see newTreeRecords).
type treeRecords struct {
	data    []byte // the array of roots, or the root node
	n       int
	bytes   int64
	maxPath int
}

// treePathShare is how many times the tree's bytes its records' paths may
// take together.
const treePathShare = 2

func newTreeRecords(data []byte) *treeRecords {
	t := &treeRecords{data: bytes.TrimSpace(data)}
	t.maxPath = max(treePathShare*len(t.data)/max(countNodes(t.data), 1), len("…/")+1)
	_ = t.Each(func(_ int, r *Record) bool {
		t.n++
		t.bytes += int64(len(r.Line))
		return true
	})
	return t
}

// countNodes counts the nodes of a tree, without making their records.
func countNodes(data []byte) int {
	n := 0
	var visit func(node []byte) bool
	visit = func(node []byte) bool {
		if len(node) == 0 || node[0] != '{' {
			return true
		}
		n++
		kids, _ := jsonscan.Lookup(node, treeChildren)
		if len(kids) > 0 && kids[0] == '[' {
			_ = jsonscan.EachElement(kids, visit)
		}
		return true
	}
	if len(data) > 0 && data[0] == '{' {
		visit(data)
		return n
	}
	_ = jsonscan.EachElement(data, visit)
	return n
}

// clipPath returns path, or its end after "…/" when it is longer than
// max bytes: from a name's start when one fits, else from a character's.
func clipPath(path []byte, max int) []byte {
	if len(path) <= max {
		return path
	}
	const mark = "…/"
	at := len(path) - (max - len(mark))
	if i := bytes.IndexByte(path[at:], '/'); i >= 0 && at+i+1 < len(path) {
		at += i + 1
	}
	for at < len(path) && !utf8.RuneStart(path[at]) {
		at++
	}
	return append([]byte(mark), path[at:]...)
}

func (t *treeRecords) Count() int  { return t.n }
func (t *treeRecords) Size() int64 { return t.bytes }

func (t *treeRecords) Each(yield func(int, *Record) bool) error {
	var (
		r    Record
		buf  []byte
		path []byte
		i    int
	)
	var walk func(node []byte, at int) bool
	visit := func(node []byte, at int) bool {
		if len(node) == 0 || node[0] != '{' {
			return true // not a node: skipped
		}
		return walk(node, at)
	}
	walk = func(node []byte, at int) bool {
		parent := len(path)
		name, ok := []byte(nil), false
		if v, found := jsonscan.Lookup(node, "name"); found {
			if s, isString := jsonscan.Unquote(v); isString {
				name, ok = []byte(s), true
			}
		}
		if !ok {
			name = strconv.AppendInt(nil, int64(at), 10)
		}
		if parent > 0 {
			path = append(path, '/')
		}
		path = append(path, name...)

		key := `{"path":`
		if _, own := jsonscan.Lookup(node, "path"); own {
			key = `{"tree_path":`
		}
		buf = jsonscan.AppendQuoted(append(buf[:0], key...), clipPath(path, t.maxPath))
		var kids []byte
		_ = jsonscan.Fields(node, func(f jsonscan.Field) bool {
			if string(f.Key) == treeChildren && len(f.Value) > 0 && f.Value[0] == '[' {
				kids = f.Value
				return true
			}
			// Key is a slice of node: the member's quoted name starts one
			// byte before it.
			start := cap(node) - cap(f.Key) - 1
			buf = append(buf, ',')
			buf = append(buf, node[start:start+len(f.Key)+2]...)
			buf = append(buf, ':')
			buf = append(buf, f.Value...)
			return true
		})
		buf = append(buf, '}')
		r = Record{Line: buf, Sent: buf}
		if !yield(i, &r) {
			return false
		}
		i++
		more := true
		if kids != nil {
			k := 0
			_ = jsonscan.EachElement(kids, func(el []byte) bool {
				more = visit(el, k)
				k++
				return more
			})
		}
		path = path[:parent]
		return more
	}
	if t.data[0] == '{' {
		visit(t.data, 0)
		return nil
	}
	k := 0
	return jsonscan.EachElement(t.data, func(el []byte) bool {
		ok := visit(el, k)
		k++
		return ok
	})
}
