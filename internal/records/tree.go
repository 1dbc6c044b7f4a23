package records

import (
	"bytes"
	"cmp"
	"slices"
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
	idx     treeIndex
	bytes   int64
	maxPath int
}

// treePathShare is how many times the tree's bytes its records' paths may
// take together.
const treePathShare = 2

func newTreeRecords(data []byte) *treeRecords {
	t := &treeRecords{data: bytes.TrimSpace(data)}
	t.idx = indexTree(t.data)
	t.maxPath = max(treePathShare*len(t.data)/max(len(t.idx.nodes), 1), len("…/")+1)
	_ = t.Each(func(_ int, r *Record) bool {
		t.bytes += int64(len(r.Line))
		return true
	})
	return t
}

// A treeIndex holds where the nodes of a tree are, found in one pass
// over its text: each byte is read once, whatever the depth. Looking a
// node's members up in its text read its whole subtree again, at each of
// its ancestors: a chain of 5,000 nodes (195 KB) cost 4.7 s of CPU.
type treeIndex struct {
	nodes []treeNode // depth first, parents before their children
	kids  []span     // the children arrays of the nodes, by start
}

// A treeNode is one node of a tree in its text.
type treeNode struct {
	start   int  // its '{'
	name    span // its "name" when that is a string; end 0 otherwise
	at      int  // its position among its siblings
	parent  int  // its parent's index in nodes, or -1 for a root
	ownPath bool // it has a "path" member of its own
}

// A span is where a value is in a text: [start, end).
type span struct{ start, end int }

// indexTree indexes the tree in data, valid JSON: a root node or an array
// of roots.
func indexTree(data []byte) treeIndex {
	var x treeIndex
	if len(data) > 0 && data[0] == '{' {
		x.node(data, 0, 0, -1)
	} else if len(data) > 0 && data[0] == '[' {
		x.array(data, 0, -1)
	}
	return x
}

// node indexes the node whose '{' is data[i], at its position at among
// the children of parent, and returns the index past it. Its members are
// read once: those of a children array are walked into rather than
// skipped. Of several children arrays, the last holds its children (as a
// decoder keeps the last of duplicate keys); every one is left out of its
// record.
func (x *treeIndex) node(data []byte, i, at, parent int) int {
	self := len(x.nodes)
	x.nodes = append(x.nodes, treeNode{start: i, at: at, parent: parent})
	named := false
	kidsNodes, kidsSpans := -1, 0
	var earlier span
	i = jsonscan.SkipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		keyEnd := jsonscan.SkipString(data, i)
		key := data[i+1 : keyEnd-1]
		i = jsonscan.SkipSpace(data, keyEnd)
		i = jsonscan.SkipSpace(data, i+1) // past ':'
		var end int
		switch k := string(key); {
		case k == treeChildren && i < len(data) && data[i] == '[':
			if kidsNodes >= 0 { // an earlier array's nodes are not its children
				x.nodes = x.nodes[:kidsNodes]
				x.kids = append(x.kids[:kidsSpans], earlier)
			}
			kidsNodes, kidsSpans = len(x.nodes), len(x.kids)
			x.kids = append(x.kids, span{start: i})
			end = x.array(data, i, self)
			x.kids[kidsSpans].end = end
			earlier = x.kids[kidsSpans]
		default:
			end = jsonscan.SkipValue(data, i)
			if k == "name" && !named {
				named = true // the first, as Lookup finds it
				if data[i] == '"' {
					x.nodes[self].name = span{i, end}
				}
			}
			x.nodes[self].ownPath = x.nodes[self].ownPath || k == "path"
		}
		i = jsonscan.SkipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return min(i+1, len(data)) // past '}'
}

// array indexes the elements of the array whose '[' is data[i], children
// of parent, and returns the index past it. An element that is not an
// object is not a node, but counts in the positions of its siblings.
func (x *treeIndex) array(data []byte, i, parent int) int {
	i = jsonscan.SkipSpace(data, i+1)
	for k := 0; i < len(data) && data[i] != ']'; k++ {
		var end int
		if data[i] == '{' {
			end = x.node(data, i, k, parent)
		} else {
			end = jsonscan.SkipValue(data, i)
		}
		i = jsonscan.SkipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return min(i+1, len(data)) // past ']'
}

// kidsEnd returns the end of the children array that starts at data[i].
func (x *treeIndex) kidsEnd(data []byte, i int) int {
	k, found := slices.BinarySearchFunc(x.kids, i, func(s span, i int) int { return cmp.Compare(s.start, i) })
	if !found {
		return jsonscan.SkipValue(data, i) // not indexed: cannot be, in valid text
	}
	return x.kids[k].end
}

// clipPath appends to dst path, or its end after "…/" when it is longer
// than max bytes: from a name's start when one fits, else from a
// character's.
func clipPath(dst, path []byte, max int) []byte {
	if len(path) <= max {
		return append(dst, path...)
	}
	const mark = "…/"
	at := len(path) - (max - len(mark))
	if i := bytes.IndexByte(path[at:], '/'); i >= 0 && at+i+1 < len(path) {
		at += i + 1
	}
	for at < len(path) && !utf8.RuneStart(path[at]) {
		at++
	}
	return append(append(dst, mark...), path[at:]...)
}

func (t *treeRecords) Count() int  { return len(t.idx.nodes) }
func (t *treeRecords) Size() int64 { return t.bytes }

// Each yields the nodes' records in the order of the index, depth first:
// a node's path is its parent's, which the path being built begins with,
// as the nodes before it are its parent and the parent's other
// descendants.
func (t *treeRecords) Each(yield func(int, *Record) bool) error {
	var (
		r       Record
		buf     []byte
		path    []byte
		clipped []byte
		data    = t.data
	)
	ends := make([]int, len(t.idx.nodes)) // the length of each node's path
	for i, n := range t.idx.nodes {
		base := 0
		if n.parent >= 0 {
			base = ends[n.parent]
		}
		path = path[:base]
		if base > 0 {
			path = append(path, '/')
		}
		name := data[n.name.start:n.name.end]
		if raw, ok := jsonscan.String(name); ok {
			path = append(path, raw...) // no escapes: no string to make
		} else if s, ok := jsonscan.Unquote(name); ok {
			path = append(path, s...)
		} else {
			path = strconv.AppendInt(path, int64(n.at), 10)
		}
		ends[i] = len(path)
		key := `{"path":`
		if n.ownPath {
			key = `{"tree_path":`
		}
		clipped = clipPath(clipped[:0], path, t.maxPath)
		buf = jsonscan.AppendQuoted(append(buf[:0], key...), clipped)
		buf = t.appendMembers(buf, n.start)
		buf = append(buf, '}')
		r = Record{Line: buf, Sent: buf}
		if !yield(i, &r) {
			return nil
		}
	}
	return nil
}

// appendMembers appends to buf the members of the node whose '{' is at
// data[i], after a comma each, but its children arrays, which it steps
// over by the index.
func (t *treeRecords) appendMembers(buf []byte, i int) []byte {
	data := t.data
	i = jsonscan.SkipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		keyEnd := jsonscan.SkipString(data, i)
		key := data[i:keyEnd] // quoted
		v := jsonscan.SkipSpace(data, keyEnd)
		v = jsonscan.SkipSpace(data, v+1) // past ':'
		var end int
		if string(key[1:len(key)-1]) == treeChildren && v < len(data) && data[v] == '[' {
			end = t.idx.kidsEnd(data, v)
		} else {
			end = jsonscan.SkipValue(data, v)
			buf = append(buf, ',')
			buf = append(buf, key...)
			buf = append(buf, ':')
			buf = append(buf, data[v:end]...)
		}
		i = jsonscan.SkipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return buf
}
