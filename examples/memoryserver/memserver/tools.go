package memserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strconv"

	"github.com/mcplro/lro"
	"github.com/mcplro/lro/internal/memstore"
)

// A tool is one tool of the server, written once for both SDKs: its
// definition and a handler over decoded arguments.
type tool struct {
	name        string
	description string
	schema      json.RawMessage // the input schema
	// task says the tool may also run as a task, on an SDK that has tasks
	// (mcp-go; see the package doc).
	task bool
	run  func(t tools, ctx context.Context, args map[string]any) output
}

// output is what a tool returns: a JSON value (sent as text and as
// structured content), a text, or an error the model sees.
type output struct {
	json any
	text string
	err  error
}

func failed(err error) output { return output{err: err} }

// A typedTool is a tool whose result is a value of type Out, which each
// SDK turns into the tool's output schema and its structured content
// (see addTyped in server.go and official.go).
type typedTool[Out any] struct {
	name        string
	description string
	schema      json.RawMessage // the input schema
	run         func(t tools, ctx context.Context, args map[string]any) (Out, error)
}

// catalog lists the server's tools, but for the typed export_memories
// (export.go).
var catalog = []tool{{
	name:        "recall_memories",
	description: `Recall the memories most relevant to a query, best first. Returns {"query", "count", "results": [{"score", "memory"}]}: each hit's relevance score and the memory at the requested detail.`,
	schema: memorySchema(props{
		"query":     {"string", "What to look for.", nil},
		"limit":     {"number", "How many memories to return (default 20, at most 100000).", 20},
		"namespace": {"string", "Only memories whose namespace starts with this, e.g. _semantic or _episodic/incidents.", nil},
	}, "query"),
	task: true,
	run:  tools.recall,
}, {
	name:        "inject_context",
	description: "Format the memories relevant to a query as a context block for a prompt, within a token budget. Returns plain text: one section a memory, best first, as many as fit the budget.",
	schema: memorySchema(props{
		"query":        {"string", "What the context is for.", nil},
		"limit":        {"number", "How many memories to consider before budgeting (default 50).", 50},
		"token_budget": {"number", "Largest size of the context block in tokens (default 2000).", 2000},
	}, "query"),
	run: tools.inject,
}, {
	name:        "list_memories",
	description: `List memories, newest first, a page at a time. Returns {"total", "memories", "next_cursor"}: the page at the requested detail, and the cursor of the next page while there is one.`,
	schema: memorySchema(props{
		"namespace": {"string", "Only memories whose namespace starts with this.", nil},
		"limit":     {"number", "Page size (default 50).", 50},
		"cursor":    {"string", "The next_cursor of the previous page.", nil},
	}),
	run: tools.list,
}, {
	name:        "audit_log",
	description: auditDescription,
	schema: schema(props{
		"lines": {"number", fmt.Sprintf("How many events to return, the most recent (default %d, at most %d).", auditLines, maxAuditLines), auditLines},
	}),
	run: tools.audit,
}, {
	name:        "memory_graph",
	description: graphDescription,
	schema: schema(props{
		"limit": {"number", fmt.Sprintf("How many memories the graph spans, newest first (default %d, at most %d).", graphLimit, maxGraphLimit), graphLimit},
	}),
	run: tools.graph,
}}

type tools struct{ store *memstore.Store }

// scoredMemory is a search hit as the tools return it; the offload
// middleware takes the score for the summary and the memory for the line.
type scoredMemory struct {
	Score  float64 `json:"score"`
	Memory any     `json:"memory"`
}

type recallResult struct {
	Query   string         `json:"query"`
	Count   int            `json:"count"`
	Results []scoredMemory `json:"results"`
}

func (t tools) recall(ctx context.Context, args map[string]any) output {
	query, err := stringArg(args, "query", true)
	if err != nil {
		return failed(err)
	}
	limit, err := intArg(args, "limit", 20, 1, 100000)
	if err != nil {
		return failed(err)
	}
	detail, err := detailOf(args, "light")
	if err != nil {
		return failed(err)
	}
	ns, err := stringArg(args, "namespace", false)
	if err != nil {
		return failed(err)
	}
	hits := t.store.Recall(query, ns, limit)
	out := recallResult{Query: query, Count: len(hits), Results: make([]scoredMemory, len(hits))}
	for i, h := range hits {
		m, _ := memstore.Project(h.Memory, detail)
		out.Results[i] = scoredMemory{Score: round(h.Score), Memory: m}
	}
	return output{json: out}
}

func (t tools) inject(ctx context.Context, args map[string]any) output {
	query, err := stringArg(args, "query", true)
	if err != nil {
		return failed(err)
	}
	limit, err := intArg(args, "limit", 50, 1, 100000)
	if err != nil {
		return failed(err)
	}
	budget, err := intArg(args, "token_budget", 2000, 1, 1<<30)
	if err != nil {
		return failed(err)
	}
	detail, err := detailOf(args, "medium")
	if err != nil {
		return failed(err)
	}
	hits := t.store.Recall(query, "", limit)
	// The specification judges inject_context on its pre-budget memories:
	// hand them over before budgeting trims them.
	memories := make([]any, len(hits))
	scores := make([]float64, len(hits))
	for i, h := range hits {
		memories[i], _ = memstore.Project(h.Memory, detail)
		scores[i] = round(h.Score)
	}
	if lro.Collect(ctx, memories, scores) {
		return output{} // replaced by the descriptor
	}
	return output{text: memstore.FormatContext(hits, detail, budget)}
}

type listResult struct {
	Total      int    `json:"total"`
	Memories   []any  `json:"memories"`
	NextCursor string `json:"next_cursor,omitempty"`
}

func (t tools) list(ctx context.Context, args map[string]any) output {
	limit, err := intArg(args, "limit", 50, 1, 100000)
	if err != nil {
		return failed(err)
	}
	detail, err := detailOf(args, "light")
	if err != nil {
		return failed(err)
	}
	c, err := stringArg(args, "cursor", false)
	if err != nil {
		return failed(err)
	}
	offset := 0
	if c != "" {
		if offset, err = strconv.Atoi(c); err != nil || offset < 0 {
			return failed(fmt.Errorf("invalid cursor %q: pass the next_cursor of the previous page", c))
		}
	}
	ns, err := stringArg(args, "namespace", false)
	if err != nil {
		return failed(err)
	}
	if offset == 0 {
		// The first request judges the whole set, before any cursor exists:
		// an offloaded listing has no cursor, the file holds everything.
		// The set goes over one memory at a time, as from a database
		// cursor: a large listing is written to its file as it is read,
		// never held whole.
		all, _ := t.store.List(ns, 0, 0)
		_, offloaded, err := lro.CollectSeq(ctx, projected(all, detail))
		if err != nil {
			return failed(err)
		}
		if offloaded {
			return output{}
		}
	}
	page, total := t.store.List(ns, offset, limit)
	out := listResult{Total: total, Memories: project(page, detail)}
	if offset+len(page) < total {
		out.NextCursor = strconv.Itoa(offset + len(page))
	}
	return output{json: out}
}

// projected yields each memory at the detail level, as JSON.
func projected(mems []*memstore.Memory, detail string) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, m := range mems {
			v, err := memstore.Project(m, detail)
			if err == nil {
				buf.Reset()
				err = enc.Encode(v)
			}
			if !yield(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err) {
				return
			}
		}
	}
}

func project(mems []*memstore.Memory, detail string) []any {
	out := make([]any, len(mems))
	for i, m := range mems {
		out[i], _ = memstore.Project(m, detail)
	}
	return out
}
