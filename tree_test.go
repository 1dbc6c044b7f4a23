package lro_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dirTree returns a directory tree as filesystem servers list one: width
// directories of width directories of files, each node a name, a type and
// its children, and how many nodes it has.
func dirTree(width int) ([]any, int) {
	var roots []any
	n := 0
	for i := range width {
		var subs []any
		for j := range width {
			var files []any
			for k := range width {
				files = append(files, map[string]any{"name": fmt.Sprintf("file_%d_%d_%d.go", i, j, k), "type": "file"})
				n++
			}
			subs = append(subs, map[string]any{"name": fmt.Sprintf("pkg%d", j), "type": "directory", "children": files})
			n++
		}
		roots = append(roots, map[string]any{"name": fmt.Sprintf("dir%d", i), "type": "directory", "children": subs})
		n++
	}
	return roots, n
}

// TestTreeShapes: results whose records are not at the top level, as real
// servers shape them, are offloaded one record a node, with its path: the
// reference filesystem server's directory_tree (indented JSON), mcp-go's
// filesystem server's tree (a preamble, then JSON, and the same JSON again
// as an embedded resource), a tree under a field, and one root node. Each
// came out as one or two records of megabytes.
func TestTreeShapes(t *testing.T) {
	t.Parallel()
	roots, nodes := dirTree(12) // 12 + 144 + 1,728 nodes
	indented, err := json.MarshalIndent(roots, "", "  ")
	require.NoError(t, err)
	compact := mustJSON(t, roots)
	for name, tc := range map[string]struct {
		content []host.Content
		nodes   int
	}{
		"directory_tree, indented": {[]host.Content{host.TextContent(string(indented))}, nodes},
		"preamble and an embedded repeat": {[]host.Content{
			host.TextContent("Directory tree for /srv/project:\n" + compact),
			{Text: compact, URI: "file:///srv/project"},
		}, nodes},
		"under a field": {[]host.Content{host.TextContent(`{"root":"/srv/project","tree":` + compact + `}`)}, nodes},
		"one root node": {[]host.Content{host.TextContent(mustJSON(t, map[string]any{"name": "project", "type": "directory", "children": roots}))}, nodes + 1},
	} {
		t.Run(name, func(t *testing.T) {
			o := genericOffloader(t)
			res := serve(t, o, "tree", nil, host.Result{Content: tc.content})
			require.Len(t, res.Content, 1, "one descriptor for the repeated document: %v", res.Content)
			d, _ := descriptorIn(t, res, 0)
			assert.Equal(t, tc.nodes, d.Summary.Count, "one record a node")
			assert.Empty(t, d.Sections, "written once")
			_, lines := fileRecords(t, d.FilePath)
			require.Len(t, lines, tc.nodes)
			var leaf struct{ Path, Name, Type string }
			for _, l := range lines {
				assert.NotContains(t, string(l), `"children"`, "a record holds its node, not the subtree")
				assert.Less(t, len(l), 200)
			}
			require.NoError(t, json.Unmarshal(lines[len(lines)-1], &leaf))
			assert.Equal(t, "file", leaf.Type)
			assert.True(t, strings.HasSuffix(leaf.Path, "dir11/pkg11/file_11_11_11.go"), leaf.Path)

			first := lro.RunCut(t, d.JQRecipes[0].Command)
			assert.Contains(t, string(first), "dir0", "recipe 1 shows nodes")
			if name == "preamble and an embedded repeat" {
				assert.JSONEq(t, `"Directory tree for /srv/project:"`, string(d.Summary.Extra["preamble"]))
			}
		})
	}
}

// TestPreambleThenJSON: a text item that says a line of what follows, then
// JSON, is read as the JSON; text that merely holds JSON later is not.
func TestPreambleThenJSON(t *testing.T) {
	o := genericOffloader(t)
	d, _ := descriptorIn(t, serve(t, o, "search", nil, host.Result{Content: []host.Content{
		host.TextContent("Found 600 tickets matching \"login\":\n" + mustJSON(t, tickets(600))),
	}}), 0)
	assert.Equal(t, 600, d.Summary.Count)
	_, lines := fileRecords(t, d.FilePath)
	assert.Contains(t, string(lines[0]), `"id":"T-0000"`)

	// A preamble longer than what the summary shows (200 bytes) is kept
	// whole in the file's header; so are the different preambles of a
	// document repeated by a text and an embedded resource.
	pre := "Tickets matching the query, newest first. " + strings.Repeat("The list is long and each ticket has an id. ", 6) + "End of the note:"
	body := mustJSON(t, tickets(600))
	d, _ = descriptorIn(t, serve(t, o, "search", nil, host.Result{Content: []host.Content{host.TextContent(pre + "\n" + body)}}), 0)
	h, _ := fileRecords(t, d.FilePath)
	assert.Greater(t, len(pre), 200)
	assert.Equal(t, pre, h.Preamble, "the header keeps the preamble whole")
	d, _ = descriptorIn(t, serve(t, o, "search", nil, host.Result{Content: []host.Content{
		host.TextContent("First view:\n" + body), {Text: "Second view:\n" + body, URI: "file:///tickets.json", Other: "resource"},
	}}), 0)
	h, _ = fileRecords(t, d.FilePath)
	assert.Equal(t, "First view:\n\nSecond view:", h.Preamble, "each preamble of a repeated document")

	long := strings.Repeat("A long log line that is not a preamble.\n", 40) + mustJSON(t, tickets(600))
	d, _ = descriptorIn(t, serve(t, o, "search", nil, host.Result{Content: []host.Content{host.TextContent(long)}}), 0)
	assert.Equal(t, 41, d.Summary.Count, "past 512 bytes it is text: its lines are the records")
}

// nestedChain returns a tree of n nodes each the only child of the one
// before, named with names of 20 bytes.
func nestedChain(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"name":"node-%015d","children":[`, i)
	}
	b.WriteString(strings.Repeat("]}", n))
	return b.String()
}

// TestDeepTreeFileStaysSmall: a record's path grows with its depth, and
// whole paths made a 284 KB chain of 4,900 nodes a 252 MB file (here 2,000
// nodes, whose walk is quicker: the file grew as the square). The file
// stays within four times the result; a long path keeps its end.
func TestDeepTreeFileStaysSmall(t *testing.T) {
	t.Parallel()
	o := genericOffloader(t)
	tree := nestedChain(2000)
	d, _ := descriptorIn(t, serve(t, o, "tree", nil, host.Result{Content: []host.Content{host.TextContent(tree)}}), 0)
	assert.Equal(t, 2000, d.Summary.Count)
	info, err := os.Stat(d.FilePath)
	require.NoError(t, err)
	t.Logf("a %d-byte tree of 2,000 nested nodes: a file of %d bytes (%.1fx)", len(tree), info.Size(), float64(info.Size())/float64(len(tree)))
	assert.LessOrEqual(t, info.Size(), int64(4*len(tree)), "the file is within four times the result")
	_, lines := fileRecords(t, d.FilePath)
	var last struct{ Path, Name string }
	require.NoError(t, json.Unmarshal(lines[len(lines)-1], &last))
	assert.True(t, strings.HasPrefix(last.Path, "…/"), "a long path is marked cut: %.40s", last.Path)
	assert.True(t, strings.HasSuffix(last.Path, "/node-000000000001999"), "and keeps its end")
	var first struct{ Path string }
	require.NoError(t, json.Unmarshal(lines[0], &first))
	assert.Equal(t, "node-000000000000000", first.Path, "a short path is whole")
}
