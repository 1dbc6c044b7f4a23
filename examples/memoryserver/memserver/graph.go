package memserver

import (
	"context"
	"slices"

	"github.com/mcplro/lro/internal/memstore"
)

const (
	graphLimit    = 300  // memories memory_graph spans by default
	maxGraphLimit = 1000 // the most it accepts: edges grow with its square
)

const graphDescription = `Return the graph of the most recent memories. Returns {"generated", "limit", "nodes", "edges"}: ` +
	`nodes holds one {"id", "title", "namespace"} a memory, newest first; edges holds one {"from", "to", "relation", "via"} for each pair of those memories ` +
	`that share a namespace (relation "same_namespace", via the namespace) or else a tag (relation "shared_tag", via the tag); ` +
	`generated is the time the graph is as of (the latest modification of its memories) and limit the limit asked for.`

type graphResult struct {
	Generated string      `json:"generated"`
	Limit     int         `json:"limit"`
	Nodes     []graphNode `json:"nodes"`
	Edges     []graphEdge `json:"edges"`
}

type graphNode struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Namespace string `json:"namespace"`
}

type graphEdge struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Relation string `json:"relation"` // same_namespace or shared_tag
	Via      string `json:"via"`      // the namespace or the tag
}

func (t tools) graph(_ context.Context, args map[string]any) output {
	limit, err := intArg(args, "limit", graphLimit, 1, maxGraphLimit)
	if err != nil {
		return failed(err)
	}
	mems, _ := t.store.List("", 0, limit)
	g := memoryGraph(mems)
	g.Limit = limit
	return output{json: g}
}

// memoryGraph links every pair of mems that shares a namespace or, failing
// that, a tag: the earlier memory's first tag the later one has too.
func memoryGraph(mems []*memstore.Memory) graphResult {
	g := graphResult{Nodes: make([]graphNode, len(mems)), Edges: []graphEdge{}}
	for i, a := range mems {
		g.Nodes[i] = graphNode{ID: a.ID, Title: a.Title, Namespace: a.Namespace}
		if m := utc(a.Modified); m > g.Generated {
			g.Generated = m
		}
		for _, b := range mems[i+1:] {
			if a.Namespace == b.Namespace {
				g.Edges = append(g.Edges, graphEdge{a.ID, b.ID, "same_namespace", a.Namespace})
				continue
			}
			for _, tag := range a.Tags {
				if slices.Contains(b.Tags, tag) {
					g.Edges = append(g.Edges, graphEdge{a.ID, b.ID, "shared_tag", tag})
					break
				}
			}
		}
	}
	return g
}
